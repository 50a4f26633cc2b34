//! A tool result's [`Attachment`]s as A2A parts, after the parts that carry the result, and
//! back: images, audio and binary documents as file parts (the bytes, their media type; a
//! document's URI as the file name), text documents as text parts with their media type. Each
//! part says which attachment it is in `metadata.attachment` (`"image"`, `"audio"`, `"text"`,
//! `"blob"`), so a reader tells it from the result, and repeats the media type and URI there
//! (`mimeType`, `uri`): an A2A 0.3 text part has no fields of its own for them. A file part
//! without that key (a peer of another library) is read as an attachment by its media type.

use std::collections::HashMap;

use a2a::{Part, PartContent};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use crate::tool::Attachment;

/// The part metadata key naming the kind of attachment a part carries.
const ATTACHMENT: &str = "attachment";
/// The part metadata keys repeating an attachment's media type and URI.
const MIME_TYPE: &str = "mimeType";
/// See [`MIME_TYPE`].
const URI: &str = "uri";

/// The part of one attachment. An attachment whose base64 is broken (it came over a wire
/// broken) travels as the text describing it, never as wrong bytes.
pub(crate) fn attachment_part(attachment: &Attachment) -> Part {
    let (kind, mut part) = match attachment {
        Attachment::Text {
            uri,
            mime_type,
            text,
        } => (
            "text",
            Part::text(text.clone())
                .with_media_type(mime_type.clone())
                .with_filename(uri.clone()),
        ),
        other => {
            let kind = match other {
                Attachment::Image { .. } => "image",
                Attachment::Audio { .. } => "audio",
                _ => "blob",
            };
            let part = match other.bytes() {
                Ok(bytes) => Part::raw(bytes).with_media_type(other.mime_type()),
                Err(_) => Part::text(other.describe()),
            };
            match other.uri() {
                Some(uri) => (kind, part.with_filename(uri)),
                None => (kind, part),
            }
        }
    };
    let mut metadata = HashMap::from([
        (ATTACHMENT.to_owned(), Value::from(kind)),
        (MIME_TYPE.to_owned(), Value::from(attachment.mime_type())),
    ]);
    if let Some(uri) = attachment.uri() {
        metadata.insert(URI.to_owned(), Value::from(uri));
    }
    part.metadata = Some(metadata);
    part
}

/// The attachment a part carries: a part marked as one, or a file part of another library.
/// `None` for a part that is (part of) the result.
pub(crate) fn part_attachment(part: &Part) -> Option<Attachment> {
    let meta = |key: &str| {
        part.metadata
            .as_ref()
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
    };
    let marked = meta(ATTACHMENT);
    let media = part
        .media_type
        .clone()
        .or_else(|| meta(MIME_TYPE).map(str::to_owned));
    let uri = || {
        part.filename
            .clone()
            .or_else(|| meta(URI).map(str::to_owned))
            .unwrap_or_default()
    };
    match (&part.content, marked) {
        (PartContent::Text(text), Some("text")) => Some(Attachment::Text {
            uri: uri(),
            mime_type: media.unwrap_or_else(|| "text/plain".into()),
            text: text.clone(),
        }),
        (PartContent::Raw(bytes), kind) => {
            let media = media.unwrap_or_else(|| "application/octet-stream".into());
            let kind = kind.unwrap_or(match media.split('/').next() {
                Some("image") => "image",
                Some("audio") => "audio",
                _ => "blob",
            });
            let data = STANDARD.encode(bytes);
            Some(match kind {
                "image" => Attachment::Image {
                    data,
                    mime_type: media,
                },
                "audio" => Attachment::Audio {
                    data,
                    mime_type: media,
                },
                _ => Attachment::Blob {
                    uri: uri(),
                    mime_type: media,
                    data,
                },
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_attachment_survives_its_part_and_results_are_not_attachments() {
        let all = [
            Attachment::image([1u8, 2], "image/png"),
            Attachment::audio([3u8], "audio/wav"),
            Attachment::text("test://doc", "text/markdown", "# Doc"),
            Attachment::blob("test://bin", "application/pdf", [4u8]),
        ];
        for attachment in all {
            let part = attachment_part(&attachment);
            assert_eq!(part_attachment(&part), Some(attachment));
        }
        assert_eq!(part_attachment(&Part::text("the result")), None);
        assert_eq!(
            part_attachment(&Part::data(serde_json::json!({"a": 1}))),
            None
        );
        // A file part of another library: read by its media type.
        let foreign = Part::raw(vec![9]).with_media_type("image/jpeg");
        assert_eq!(
            part_attachment(&foreign),
            Some(Attachment::image([9u8], "image/jpeg"))
        );
    }
}
