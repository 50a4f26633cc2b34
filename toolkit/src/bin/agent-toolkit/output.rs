//! What the CLI prints — tool rows, call results, cards — as tables and JSON on stdout, and
//! progress on stderr. A leaf: the commands fill in [`ToolRow`]s and [`CallResult`]s.

use std::io::IsTerminal;

use agent_toolkit::a2a::types::AgentCard;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

/// One tool as `tools list` shows it.
#[derive(Debug)]
pub struct ToolRow {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub read_only: bool,
    pub idempotent: bool,
    pub destructive: bool,
}

/// What a call produced.
#[derive(Debug)]
pub struct CallResult {
    /// The tool reported a failure (its message is in `text`).
    pub is_error: bool,
    /// The text a model would see.
    pub text: String,
    /// Structured output, when the tool declared some.
    pub structured: Option<Value>,
}

/// JSON for `tools list --json`.
fn row_json(row: &ToolRow) -> Value {
    let mut v = json!({
        "name": row.name,
        "description": row.description,
        "inputSchema": row.input_schema,
        "annotations": {
            "readOnlyHint": row.read_only,
            "idempotentHint": row.idempotent,
            "destructiveHint": row.destructive,
        },
    });
    if let Some(out) = &row.output_schema {
        v["outputSchema"] = out.clone();
    }
    v
}

/// Widest description column of the table before it is cut.
const DESCRIPTION_WIDTH: usize = 60;

/// `tools list`: a table, or JSON.
pub fn print_tools(tools: &[ToolRow], as_json: bool) {
    if as_json {
        let rows: Vec<Value> = tools.iter().map(row_json).collect();
        println!("{}", pretty(&Value::Array(rows)));
        return;
    }
    if tools.is_empty() {
        println!("(no tools)");
        return;
    }
    let rows: Vec<[String; 4]> = tools
        .iter()
        .map(|t| {
            [
                t.name.clone(),
                params(&t.input_schema),
                hints(t),
                first_line(&t.description, DESCRIPTION_WIDTH),
            ]
        })
        .collect();
    let header = [
        "NAME".to_string(),
        "PARAMETERS".to_string(),
        "HINTS".to_string(),
        "DESCRIPTION".to_string(),
    ];
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let line = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect::<Vec<_>>()
            .join("  ");
        println!("{}", line.trim_end());
    }
}

/// The parameter names of a schema, required ones marked with `*`.
fn params(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "-".into();
    };
    if props.is_empty() {
        return "-".into();
    }
    props
        .keys()
        .map(|k| {
            if required.contains(&k.as_str()) {
                format!("{k}*")
            } else {
                k.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn hints(t: &ToolRow) -> String {
    let mut out = Vec::new();
    if t.read_only {
        out.push("read-only");
    }
    if t.idempotent {
        out.push("idempotent");
    }
    if t.destructive {
        out.push("destructive");
    }
    if out.is_empty() {
        "-".into()
    } else {
        out.join(",")
    }
}

fn first_line(text: &str, width: usize) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.chars().count() <= width {
        line.to_string()
    } else {
        let cut: String = line.chars().take(width - 1).collect();
        format!("{cut}…")
    }
}

/// `tools call`: the structured output when there is one, else the text.
pub fn print_result(result: &CallResult, as_json: bool) {
    if as_json {
        let output = result
            .structured
            .clone()
            .unwrap_or_else(|| Value::String(result.text.clone()));
        println!(
            "{}",
            pretty(&json!({ "is_error": result.is_error, "output": output }))
        );
    } else if let Some(structured) = &result.structured {
        println!("{}", pretty(structured));
    } else {
        println!("{}", result.text);
    }
}

/// `card`: a summary, or the whole card.
pub fn print_card(card: &AgentCard, as_json: bool) {
    if as_json {
        let value = serde_json::to_value(card).unwrap_or(Value::Null);
        println!("{}", pretty(&value));
        return;
    }
    println!("{} (version {})", card.name, card.version);
    if !card.description.is_empty() {
        println!("  {}", card.description);
    }
    println!("interfaces:");
    for i in &card.supported_interfaces {
        println!(
            "  {} {} at {}",
            i.protocol_binding, i.protocol_version, i.url
        );
    }
    println!(
        "streaming: {}",
        if card.capabilities.streaming.unwrap_or(false) {
            "yes"
        } else {
            "no"
        }
    );
    if let Some(extensions) = &card.capabilities.extensions
        && !extensions.is_empty()
    {
        println!("extensions:");
        for e in extensions {
            println!("  {}", e.uri);
        }
    }
    println!("skills:");
    if card.skills.is_empty() {
        println!("  (none)");
    }
    for s in &card.skills {
        let tags = if s.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", s.tags.join(", "))
        };
        println!(
            "  {}{tags}: {}",
            s.id,
            first_line(&s.description, DESCRIPTION_WIDTH)
        );
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Progress of a running call on stderr: a live bar on a terminal, one line per update
/// otherwise (so logs and tests see every step).
pub struct Progress {
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl Progress {
    pub fn on_stderr() -> Self {
        Progress {
            bar: None,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    pub fn update(&mut self, done: f64, total: Option<f64>, message: &str) {
        if !self.terminal {
            match total {
                Some(total) => eprintln!("progress: {done}/{total} {message}"),
                None => eprintln!("progress: {done} {message}"),
            }
            return;
        }
        let bar = self.bar.get_or_insert_with(|| {
            let bar = match total {
                Some(total) => {
                    let bar = ProgressBar::new(total.max(0.0) as u64);
                    bar.set_style(
                        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_bar()),
                    );
                    bar
                }
                None => ProgressBar::new_spinner(),
            };
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar
        });
        if let Some(total) = total {
            bar.set_length(total.max(0.0) as u64);
        }
        bar.set_position(done.max(0.0) as u64);
        bar.set_message(message.to_string());
    }

    pub fn update_chunk(&mut self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => eprintln!("{text}"),
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
