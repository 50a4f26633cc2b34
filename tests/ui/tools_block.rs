use agent_toolkit::prelude::*;

struct Notes;

#[tools]
impl Notes {
    /// Adds a note.
    #[tool(name = "write")]
    fn add(&self, text: String) -> String {
        text
    }

    /// Writes a note.
    #[tool]
    fn write(&self, text: String) -> String {
        text
    }

    /// Names the runtime per method.
    #[tool(crate = "agent_toolkit")]
    fn count(&self) -> usize {
        0
    }

    /// Takes no `self`.
    #[tool]
    fn create() -> Notes {
        Notes
    }

    /// Clears the notes.
    #[tool = "clear"]
    fn clear(&self) {}
}

fn main() {}
