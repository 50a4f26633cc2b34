//! [`Attachment`]: media a tool returns beside the text the model reads.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// Media a tool returns beside the text or JSON the model reads: an image, audio, or an
/// embedded resource (a document with its URI). Attach them with
/// [`ToolOutput::with_attachment`](crate::ToolOutput::with_attachment).
///
/// They travel with the result: an MCP client gets them as `image`, `audio` and `resource`
/// content blocks after the text block, an A2A caller as file parts (bytes with their media
/// type) after the result's parts, and tools imported over MCP or A2A hand them back as
/// attachments; a durable job's stored result keeps them. A model behind a provider wire reads
/// the output's text only (and a paused run keeps only what the model read), so say in the
/// text what is attached. Binary data is kept base64-encoded, as every wire spells it.
///
/// ```
/// use agent_toolkit::tool::Attachment;
/// use agent_toolkit::prelude::*;
///
/// /// Render the chart.
/// #[tool(read_only)]
/// fn chart() -> ToolOutput {
///     let png: Vec<u8> = vec![0x89, b'P', b'N', b'G']; // the rendered bytes
///     ToolOutput::text("The chart is attached (PNG).")
///         .with_attachment(Attachment::image(&png, "image/png"))
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Attachment {
    /// An image.
    Image {
        /// The image's bytes, base64-encoded.
        data: String,
        /// Its media type, e.g. `image/png`.
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// The audio's bytes, base64-encoded.
        data: String,
        /// Its media type, e.g. `audio/wav`.
        mime_type: String,
    },
    /// A text document, named by its URI (an MCP embedded text resource).
    Text {
        /// Where the document lives, e.g. `file:///report.md` or `test://embedded-resource`.
        uri: String,
        /// Its media type, e.g. `text/plain`.
        mime_type: String,
        /// The document.
        text: String,
    },
    /// A binary document, named by its URI (an MCP embedded blob resource).
    Blob {
        /// Where the document lives.
        uri: String,
        /// Its media type, e.g. `application/pdf`.
        mime_type: String,
        /// The document's bytes, base64-encoded.
        data: String,
    },
}

impl Attachment {
    /// An image from its bytes.
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Attachment::Image {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// Audio from its bytes.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Attachment::Audio {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// A text document named by `uri`.
    pub fn text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Attachment::Text {
            uri: uri.into(),
            mime_type: mime_type.into(),
            text: text.into(),
        }
    }

    /// A binary document named by `uri`, from its bytes.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Self {
        Attachment::Blob {
            uri: uri.into(),
            mime_type: mime_type.into(),
            data: STANDARD.encode(bytes),
        }
    }

    /// The media type.
    pub fn mime_type(&self) -> &str {
        match self {
            Attachment::Image { mime_type, .. }
            | Attachment::Audio { mime_type, .. }
            | Attachment::Text { mime_type, .. }
            | Attachment::Blob { mime_type, .. } => mime_type,
        }
    }

    /// The URI of a document (`None` for images and audio).
    pub fn uri(&self) -> Option<&str> {
        match self {
            Attachment::Text { uri, .. } | Attachment::Blob { uri, .. } => Some(uri),
            Attachment::Image { .. } | Attachment::Audio { .. } => None,
        }
    }

    /// The bytes: decoded for images, audio and blobs, the UTF-8 of a text document. An error
    /// when the base64 is broken (an attachment that came over a wire).
    pub fn bytes(&self) -> Result<Vec<u8>, base64::DecodeError> {
        match self {
            Attachment::Image { data, .. }
            | Attachment::Audio { data, .. }
            | Attachment::Blob { data, .. } => STANDARD.decode(data),
            Attachment::Text { text, .. } => Ok(text.clone().into_bytes()),
        }
    }

    /// A short description for a reader of text: `[image: image/png]`,
    /// `[resource: file:///a.pdf (application/pdf)]`.
    pub fn describe(&self) -> String {
        match self {
            Attachment::Image { mime_type, .. } => format!("[image: {mime_type}]"),
            Attachment::Audio { mime_type, .. } => format!("[audio: {mime_type}]"),
            Attachment::Text { uri, mime_type, .. } | Attachment::Blob { uri, mime_type, .. } => {
                format!("[resource: {uri} ({mime_type})]")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn bytes_round_trip_and_serialize_tagged() {
        let image = Attachment::image([1u8, 2, 255], "image/png");
        assert_eq!(image.bytes().unwrap(), vec![1, 2, 255]);
        assert_eq!(
            serde_json::to_value(&image).unwrap(),
            json!({"type": "image", "data": "AQL/", "mime_type": "image/png"})
        );
        let doc = Attachment::text("test://doc", "text/plain", "hello");
        assert_eq!(doc.uri(), Some("test://doc"));
        assert_eq!(doc.bytes().unwrap(), b"hello");
        let back: Attachment = serde_json::from_value(serde_json::to_value(&doc).unwrap()).unwrap();
        assert_eq!(back, doc);
        let broken = Attachment::Blob {
            uri: "x".into(),
            mime_type: "application/pdf".into(),
            data: "not base64!".into(),
        };
        assert!(broken.bytes().is_err());
        assert_eq!(broken.describe(), "[resource: x (application/pdf)]");
    }
}
