//! XML-element parameters, the form of `seeds/002`:
//! `<parameters><a>10</a><b>5</b><operation>add</operation></parameters>`, read with
//! `quick-xml` into a tree of `Element`s (`syntax.rs`); `typing.rs` gives them JSON types.
//!
//! Reading rules: entities (`&lt;`, `&amp;`, `&#233;`, ...) are decoded and CDATA sections
//! taken verbatim. Whitespace around an element's text that includes a line break is layout
//! and removed; other whitespace is kept, and an element with nothing but whitespace is
//! empty. An `&` that starts no entity, or an unknown entity, is kept as written: models write
//! `Tom & Jerry`. Attributes of parameter elements, comments and processing instructions are
//! ignored. An element holding both text and child elements, a mismatched or missing closing
//! tag, and a raw `<` in text are refused with a message saying what and where.

use quick_xml::Reader;
use quick_xml::events::Event;

use super::error::{TextCallError, snippet};
use super::syntax::{Body, Element};

/// Deepest nesting of parameter elements read. Deeper input is refused rather than risk the
/// stack of the recursive typing; no parameter schema nests this deep in practice.
const MAX_NESTING: usize = 64;

/// Reads the `<parameters>` element that starts at byte `start` of `text` (at its `<`): its
/// child elements and the byte offset just past `</parameters>`.
pub(super) fn read(
    text: &str,
    start: usize,
    call: usize,
) -> Result<(Vec<Element>, usize), TextCallError> {
    let input = &text[start..];
    let mut reader = Reader::from_str(input);
    let config = reader.config_mut();
    // Models write `Tom & Jerry` unescaped; an `&` that starts no entity is plain text.
    config.allow_dangling_amp = true;
    config.check_end_names = true;
    let bad = |what: String| {
        TextCallError::Malformed(format!(
            "the <parameters> of tool call #{call} are not well-formed XML: {what}"
        ))
    };
    // One frame per open element: its name, its text pieces, its children.
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        let event = reader.read_event().map_err(|error| {
            let at = usize::try_from(reader.buffer_position()).unwrap_or(input.len());
            bad(format!(
                "{error}, near `{}`; write `<` as &lt; and `&` as &amp; in values, or wrap \
                 them in <![CDATA[...]]>",
                snippet(&input[..at.min(input.len())])
            ))
        })?;
        match event {
            Event::Start(tag) => {
                if stack.len() > MAX_NESTING {
                    return Err(bad(format!(
                        "elements are nested more than {MAX_NESTING} levels deep"
                    )));
                }
                stack.push(Frame::new(tag.name().as_ref()));
            }
            Event::Empty(tag) => {
                let element = Element {
                    name: tag.name().as_ref().to_owned(),
                    body: Body::Empty,
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(element),
                    // `<parameters/>`: no parameters at all.
                    None => return Ok((Vec::new(), start + position(&reader, input))),
                }
            }
            Event::End(_) => {
                let Some(frame) = stack.pop() else {
                    return Err(bad("a closing tag without its opening tag".to_owned()));
                };
                if stack.is_empty() {
                    // The `</parameters>` that ends the parameters.
                    if frame.has_text() {
                        return Err(bad("text directly inside <parameters>; put each value \
                             in an element named after its parameter, such as \
                             <city>Paris</city>, or write one JSON object"
                            .to_owned()));
                    }
                    return Ok((frame.children, start + position(&reader, input)));
                }
                let name = frame.name.clone();
                let body = frame.into_body().map_err(|()| {
                    bad(format!(
                        "<{name}> holds both text and child elements; write either a value \
                         or child elements"
                    ))
                })?;
                if let Some(parent) = stack.last_mut() {
                    parent.children.push(Element { name, body });
                }
            }
            Event::Text(piece) => {
                if let Some(frame) = stack.last_mut() {
                    frame.text(&piece.xml10_content(), false);
                }
            }
            Event::CData(piece) => {
                if let Some(frame) = stack.last_mut() {
                    frame.text(&piece.xml10_content(), true);
                }
            }
            Event::GeneralRef(reference) => {
                let decoded = match reference.resolve_char_ref() {
                    Ok(Some(ch)) => ch.to_string(),
                    Ok(None) => {
                        let name = reference.xml10_content();
                        match quick_xml::escape::resolve_predefined_entity(&name) {
                            Some(text) => text.to_owned(),
                            None => format!("&{name};"),
                        }
                    }
                    Err(error) => return Err(bad(format!("{error}"))),
                };
                if let Some(frame) = stack.last_mut() {
                    frame.text(&decoded, true);
                }
            }
            Event::Eof => {
                let open = stack.last().map_or("parameters", |f| f.name.as_str());
                return Err(bad(format!(
                    "<{open}> is not closed before the end of the reply"
                )));
            }
            Event::Comment(_) | Event::PI(_) | Event::Decl(_) | Event::DocType(_) => {}
        }
    }
}

fn position(reader: &Reader<&[u8]>, input: &str) -> usize {
    usize::try_from(reader.buffer_position())
        .unwrap_or(input.len())
        .min(input.len())
}

/// An element being read.
struct Frame {
    name: String,
    /// Text pieces, each with whether it is verbatim (CDATA or an entity: never layout).
    pieces: Vec<(String, bool)>,
    children: Vec<Element>,
}

impl Frame {
    fn new(name: &str) -> Self {
        Frame {
            name: name.to_owned(),
            pieces: Vec::new(),
            children: Vec::new(),
        }
    }

    fn text(&mut self, text: &str, verbatim: bool) {
        self.pieces.push((text.to_owned(), verbatim));
    }

    /// Whether the element holds text other than layout whitespace.
    fn has_text(&self) -> bool {
        self.pieces
            .iter()
            .any(|(text, verbatim)| *verbatim || !text.trim().is_empty())
    }

    /// The body; `Err` for text mixed with child elements.
    fn into_body(mut self) -> Result<Body, ()> {
        let significant = self.has_text();
        if !self.children.is_empty() {
            return if significant {
                Err(())
            } else {
                Ok(Body::Children(self.children))
            };
        }
        if !significant {
            return Ok(Body::Empty);
        }
        if let Some((first, false)) = self.pieces.first_mut() {
            let body = first.trim_start();
            if first[..first.len() - body.len()].contains('\n') {
                *first = body.to_owned();
            }
        }
        if let Some((last, false)) = self.pieces.last_mut() {
            let body = last.trim_end();
            if last[body.len()..].contains('\n') {
                last.truncate(body.len());
            }
        }
        Ok(Body::Text(
            self.pieces.into_iter().map(|(text, _)| text).collect(),
        ))
    }
}

#[cfg(test)]
mod tests;
