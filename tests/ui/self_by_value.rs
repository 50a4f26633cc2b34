use agent_toolkit::prelude::*;

struct Store;

#[tools]
impl Store {
    /// Consumes the store.
    #[tool]
    fn consume(self, key: String) -> String {
        key
    }

    /// Mutates the store.
    #[tool]
    fn mutate(&mut self) -> String {
        String::new()
    }
}

fn main() {}
