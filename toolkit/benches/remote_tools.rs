//! Remote tool call latency over loopback against a local call, compared in the same run
//! (issue: A2A interop, figures).
//!
//! - `remote_tools/local`: `Toolkit::call` of the 3-parameter tool the other benches use.
//! - `remote_tools/remote_streaming`: the same tool served by `A2aToolServer` on 127.0.0.1 in
//!   this process and called through a `RemoteTool` in a client toolkit — A2A 1.0,
//!   `SendStreamingMessage` (how remote tools are called when the agent streams: progress and
//!   cancellation need it).
//! - `remote_tools/remote_blocking`: the same over `SendMessage` (the card registered with
//!   `streaming: false`).
//! - `remote_tools/remote_v03`: the same over A2A 0.3 (`message/stream`, converted both ways).
//!
//! Server and client share one multi-thread runtime (2 workers), so each remote figure is the
//! whole round trip: client stack, HTTP/1.1 over loopback, server stack, and back.
//!
//! Run with `cargo bench -p agent-toolkit --features a2a --bench remote_tools`.

use std::hint::black_box;

// The shared fixture; this bench needs only the tool, not the by-hand baseline.
#[allow(dead_code)]
mod common;

use agent_toolkit::a2a::client::{AgentConfig, RemoteToolRegistry, WireVersion};
use agent_toolkit::a2a::server::A2aToolServer;
use agent_toolkit::prelude::*;
use common::{ARGS, Add3};
use criterion::{Criterion, criterion_group, criterion_main};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A client toolkit whose `srv_add3` is the server's `add3`, reached as `config` says.
async fn client(url: &str, version: WireVersion, streaming: bool) -> Toolkit {
    let registry = RemoteToolRegistry::new();
    let mut config = AgentConfig::new(url).prefer_version(version);
    if !streaming {
        let mut card = agent_toolkit::a2a::client::RemoteAgent::connect(url)
            .await
            .expect("card")
            .card()
            .clone();
        card.capabilities.streaming = Some(false);
        config = config.card(card);
    }
    registry.add_agent("srv", config).await.expect("register");
    Toolkit::builder()
        .register(registry.tools())
        .build()
        .expect("client toolkit")
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let local = Toolkit::builder().register(Add3).build().expect("toolkit");
    let url = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        tokio::spawn(A2aToolServer::new(&local).serve(listener));
        url
    });
    let streaming = rt.block_on(client(&url, WireVersion::V1, true));
    let blocking = rt.block_on(client(&url, WireVersion::V1, false));
    let v03 = rt.block_on(client(&url, WireVersion::V03, true));

    let ctx = ToolContext::new();
    let mut group = c.benchmark_group("remote_tools");
    group.bench_function("local", |b| {
        b.to_async(&rt).iter(|| async {
            let result = local.call(ToolCall::new("c", "add3", ARGS), &ctx).await;
            assert!(!result.is_error());
            black_box(result)
        })
    });
    for (name, toolkit) in [
        ("remote_streaming", &streaming),
        ("remote_blocking", &blocking),
        ("remote_v03", &v03),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&rt).iter(|| async {
                let result = toolkit
                    .call(ToolCall::new("c", "srv_add3", ARGS), &ctx)
                    .await;
                assert!(!result.is_error(), "{}", result.model_text());
                black_box(result)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
