use std::sync::Arc;

use agent_toolkit::prelude::*;

struct Files;

#[tools]
impl Files {
    /// Lists the files.
    #[tool(read_only)]
    fn list(&self) -> Vec<String> {
        Vec::new()
    }

    /// Removes a file; the mistake is the one error reported.
    #[tool(timeout = "soon")]
    fn remove(&self, path: String) -> String {
        path
    }
}

fn main() {
    // Neither the registration nor the methods add errors of their own.
    let _ = Toolkit::builder().register(Files).register(Arc::new(Files));
    let _ = Files.list();
}
