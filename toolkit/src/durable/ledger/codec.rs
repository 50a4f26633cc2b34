//! A ledger row as the toolkit sees it: its [`JobRecord`], and its result as stored.

use std::time::{Duration, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::Row;
use crate::error::{ToolError, ToolErrorKind};
use crate::jobs::{JobError, JobRecord, JobStatus};
use crate::storage::stored::{self, Stored};
use crate::tool::result::{Job, JobId};
use crate::tool::{Content, ToolOutput, ToolResult};

impl Row {
    pub(super) fn record(self) -> Result<JobRecord, JobError> {
        let id = JobId(self.id as u64);
        let Some(state) = self.state() else {
            return Err(JobError::Corrupt {
                job: id.0,
                message: format!("unknown state `{}`", self.state),
            });
        };
        let status = state.status();
        let result = match &self.result {
            Some(text) if status != JobStatus::Pending => Some(decode_result(&self, text)?),
            _ => None,
        };
        Ok(JobRecord {
            id,
            call: self.call(),
            status,
            result,
            submitted: UNIX_EPOCH + Duration::from_millis(self.submitted_ms.max(0) as u64),
            finished: self
                .finished_ms
                .map(|ms| UNIX_EPOCH + Duration::from_millis(ms.max(0) as u64)),
            taken: self.taken,
        })
    }
}

/// A result as stored in the ledger (the call id and tool name are columns of the row).
#[derive(Serialize, Deserialize)]
struct StoredResult {
    attempts: u32,
    // Not flattened: serde cannot flatten a `RawValue`.
    outcome: StoredOutcome,
}

impl Stored for StoredResult {
    const WHAT: &'static str = "a stored result";
    const VERSION: u32 = 1;
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum StoredOutcome {
    Text {
        text: String,
        #[serde(default)]
        metadata: serde_json::Map<String, serde_json::Value>,
    },
    Json {
        json: Box<RawValue>,
        #[serde(default)]
        metadata: serde_json::Map<String, serde_json::Value>,
    },
    Error {
        kind: String,
        message: String,
        #[serde(default)]
        detail: Option<String>,
        #[serde(default)]
        retryable: bool,
    },
}

pub(super) fn encode_result(result: &ToolResult) -> String {
    let outcome = match &result.outcome {
        Ok(output) => match &output.content {
            Content::Text(text) => StoredOutcome::Text {
                text: text.clone(),
                metadata: output.metadata.clone(),
            },
            Content::Json(json) => StoredOutcome::Json {
                json: json.clone(),
                metadata: output.metadata.clone(),
            },
        },
        Err(error) => StoredOutcome::Error {
            kind: error.kind().as_str().to_string(),
            message: error.message().to_string(),
            detail: error.source().map(|s| s.to_string()),
            retryable: error.is_retryable(),
        },
    };
    stored::encode(&StoredResult {
        attempts: result.attempts,
        outcome,
    })
}

fn decode_result(row: &Row, text: &str) -> Result<ToolResult, JobError> {
    let id = JobId(row.id as u64);
    let corrupt = |message: String| JobError::Corrupt { job: id.0, message };
    let stored: StoredResult = stored::decode(text).map_err(|e| corrupt(e.to_string()))?;
    let outcome = match stored.outcome {
        StoredOutcome::Text { text, metadata } => {
            let mut output = ToolOutput::text(text);
            output.metadata = metadata;
            Ok(output)
        }
        StoredOutcome::Json { json, metadata } => Ok(ToolOutput {
            content: Content::Json(json),
            metadata,
        }),
        StoredOutcome::Error {
            kind,
            message,
            detail,
            retryable,
        } => {
            let kind = kind
                .parse::<ToolErrorKind>()
                .map_err(|e| corrupt(e.to_string()))?;
            let mut error = ToolError::new(kind, message).with_retryable(retryable);
            if let Some(detail) = detail {
                error = error.with_detail(detail);
            }
            Err(error)
        }
    };
    let mut result = ToolResult::new(
        row.call_id.as_str(),
        row.tool.as_str(),
        outcome,
        stored.attempts,
    );
    result.job = Some(Job::Finished(id));
    Ok(result)
}

/// The results of finished rows; a result that cannot be read back becomes the job's one
/// (error) result rather than being dropped.
pub(super) fn results_of(rows: Vec<Row>) -> Vec<ToolResult> {
    let mut results = Vec::with_capacity(rows.len());
    for row in rows {
        let Some(text) = row.result.as_deref() else {
            continue;
        };
        match decode_result(&row, text) {
            Ok(result) => results.push(result),
            Err(e) => {
                tracing::error!(error = %e, "a stored result is unreadable");
                let error = ToolError::execution(
                    "the result of this background call could not be read back",
                )
                .with_detail(e.to_string());
                let mut result =
                    ToolResult::new(row.call_id.as_str(), row.tool.as_str(), Err(error), 0);
                result.job = Some(Job::Finished(JobId(row.id as u64)));
                results.push(result);
            }
        }
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Attachment;

    /// A finished job's result comes back as it was stored: its text, its metadata, and the
    /// attachments that ride in the metadata.
    #[test]
    fn a_stored_result_keeps_its_metadata_and_attachments() {
        let output = ToolOutput::text("the chart")
            .with_metadata("rows", serde_json::json!(3))
            .with_attachment(Attachment::image([1u8, 2, 3], "image/png"));
        let result = ToolResult::new("c1", "chart", Ok(output.clone()), 2);
        let row = Row {
            id: 7,
            call_id: "c1".into(),
            tool: "chart".into(),
            arguments: "{}".into(),
            state: "finished".into(),
            result: Some(encode_result(&result)),
            taken: false,
            submitted_ms: 0,
            finished_ms: Some(5),
            started_by: None,
        };
        let back = results_of(vec![row]).pop().unwrap();
        assert_eq!(back.output(), Some(&output));
        assert_eq!(back.attempts, 2);
        assert_eq!(back.output().unwrap().attachments().len(), 1);
    }
}
