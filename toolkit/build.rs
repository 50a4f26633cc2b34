//! One private name for "a durable store is compiled in": `cfg(durable)` is set when the
//! `sqlite` or the `postgres` feature is on, so the code says it once instead of repeating
//! `any(feature = "sqlite", feature = "postgres")`. Not a feature: users pick an engine.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(durable)");
    if std::env::var_os("CARGO_FEATURE_SQLITE").is_some()
        || std::env::var_os("CARGO_FEATURE_POSTGRES").is_some()
    {
        println!("cargo::rustc-cfg=durable");
    }
}
