//! What `#[tool]` and `#[tools]` generate: names, descriptions, parameters, options.

use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use agent_toolkit::prelude::*;
use agent_toolkit::tool::{ParamKind, ToolSpec};
use serde_json::json;

use super::fixtures::*;
use super::{call, err, ok};

fn spec(tool: impl AgentTool) -> ToolSpec {
    tool.spec()
}

#[test]
fn name_and_description_come_from_the_fn_and_its_docs() {
    let s = spec(GetWeather);
    assert_eq!(s.name, "get_weather");
    assert_eq!(
        s.description,
        "Get the current weather for a location.\n\nUses the paid API."
    );
    let s = spec(SaveAddress);
    assert_eq!(s.name, "store_address");
    assert_eq!(s.description, "Store an address.");
}

#[test]
fn parameters_are_classified_by_their_attributes() {
    let s = spec(GetWeather);
    let kinds: Vec<_> = s.params.iter().map(|p| (p.name.as_ref(), p.kind)).collect();
    assert_eq!(
        kinds,
        [
            ("location", ParamKind::Required),
            ("unit", ParamKind::Optional),
            ("days", ParamKind::Defaulted),
            ("api_key", ParamKind::Preset),
            ("user", ParamKind::Context),
        ]
    );
    assert_eq!(
        s.params[0].description.as_deref(),
        Some("City and state, e.g. \"San Francisco, CA\".")
    );
    assert_eq!(s.params[4].rust_type, "Ctx<User>");
    // Hidden parameters carry no schema at all.
    assert!(s.params[3].schema.is_null() && s.params[4].schema.is_null());

    let e = spec(Echo);
    assert_eq!(e.params[1].name, "bee");
    assert_eq!(e.params[1].description.as_deref(), Some("A renamed value."));
    assert_eq!(e.params[3].kind, ParamKind::Defaulted);
}

#[test]
fn options_are_stored_in_the_metadata() {
    let o = spec(GetWeather).options;
    assert_eq!(o.groups, ["weather"]);
    let hints = &o.annotations;
    assert!(hints.read_only && !hints.idempotent && !hints.destructive);
    assert_eq!(o.timeout, Some(Duration::from_secs(2)));
    assert_eq!(o.retries, Some(2));
    assert!(!o.blocking, "async fns are not blocking");

    let o = spec(AllOptions).options;
    assert!(o.sequential && o.background && o.requires_approval && o.annotations.destructive);
    assert!(o.blocking, "plain fns are marked blocking for the engine");
    assert!(spec(SaveAddress).options.annotations.idempotent);
}

#[test]
fn output_schema_is_declared_for_json_returns_only() {
    let out = spec(GetWeather)
        .output_schema
        .expect("Json<T> declares a schema");
    assert_eq!(out["type"], "object");
    assert!(out["properties"]["degrees"].is_object());
    assert!(spec(Echo).output_schema.is_none());
}

#[tokio::test]
async fn the_original_functions_stay_callable() {
    assert_eq!(
        echo("x".into(), None, 1, false, "s".into()),
        "a=x b=None c=1 d=false secret=s"
    );
    let w = get_weather(
        "Oslo".into(),
        None,
        1,
        "k".into(),
        Ctx(Arc::new(User { name: "u".into() })),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.0.city, "Oslo/1/k/u");
}

#[tokio::test]
async fn tools_on_an_impl_share_the_value() {
    let counter = Arc::new(Counter {
        hits: AtomicUsize::new(0),
    });
    let toolkit = Toolkit::builder()
        .group("counter", "Counting")
        .register(counter.clone())
        .build()
        .unwrap();
    let names: Vec<_> = toolkit
        .definitions()
        .iter()
        .map(|d| d.name().to_string())
        .collect();
    assert_eq!(names, ["add", "read"], "only #[tool] methods are tools");
    assert_eq!(ok(&call(&toolkit, "add", r#"{"by": 2}"#).await), "2");
    assert_eq!(ok(&call(&toolkit, "add", r#"{"by": 3}"#).await), "5");
    assert_eq!(ok(&call(&toolkit, "read", "{}").await), "5");
    counter.reset();
    assert_eq!(ok(&call(&toolkit, "read", "").await), "0");
    assert_eq!(
        toolkit.definition("add").unwrap().parameters()["properties"]["by"]["description"],
        json!("How much to add.")
    );
}

#[tokio::test]
async fn tools_on_an_impl_register_by_value_too() {
    let toolkit = Toolkit::builder()
        .group("counter", "Counting")
        .register(Counter {
            hits: AtomicUsize::new(40),
        })
        .build()
        .unwrap();
    assert_eq!(ok(&call(&toolkit, "add", r#"{"by": 2}"#).await), "42");
}

/// A facade crate's re-export of agent_toolkit, one module deep.
mod facade {
    pub use agent_toolkit as toolkit;
}

/// `crate = ".."`: tools whose macros reach the runtime through a renamed path, as for users
/// who depend on agent_toolkit through a crate of their own or rename it.
mod renamed {
    use agent_toolkit as at;

    /// Repeat a word in capitals.
    #[at::tool(crate = "at", read_only)]
    pub fn shout(
        word: String,
        #[arg(default = 2)] times: usize,
        #[ctx] call: at::CallInfo,
    ) -> String {
        format!("{} ({})", word.to_uppercase().repeat(times), call.tool_name)
    }

    pub struct Greeter {
        pub greeting: String,
    }

    #[at::tools(crate = "crate::macros::facade::toolkit")]
    impl Greeter {
        /// Greet someone.
        #[at::tool]
        fn greet(&self, name: String) -> String {
            format!("{}, {name}!", self.greeting)
        }
    }
}

#[tokio::test]
async fn a_renamed_runtime_path_makes_the_same_tools() {
    let s = spec(renamed::Shout);
    assert_eq!(s.name, "shout");
    assert!(s.options.annotations.read_only);
    let kinds: Vec<_> = s.params.iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ParamKind::Required,
            ParamKind::Defaulted,
            ParamKind::Context
        ]
    );

    let toolkit = Toolkit::builder()
        .register(renamed::Shout)
        .register(renamed::Greeter {
            greeting: "Hello".into(),
        })
        .build()
        .unwrap();
    assert_eq!(
        ok(&call(&toolkit, "shout", r#"{"word": "hey"}"#).await),
        "HEYHEY (shout)"
    );
    assert_eq!(
        ok(&call(&toolkit, "greet", r#"{"name": "Ada"}"#).await),
        "Hello, Ada!"
    );
    // The thorough path runs through the renamed path too.
    let e = err(&call(&toolkit, "shout", r#"{"times": "x"}"#).await).to_string();
    assert!(e.contains("missing required argument `word`"), "{e}");
    assert!(e.contains("argument `times`"), "{e}");
}
