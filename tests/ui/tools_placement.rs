use agent_toolkit::prelude::*;

trait Named {
    fn name(&self) -> String;
}

struct A;

#[tools]
impl Named for A {
    /// The name.
    #[tool]
    fn name(&self) -> String {
        String::new()
    }
}

struct B<T>(T);

#[tools]
impl<T: Send + Sync + 'static> B<T> {
    /// Nothing.
    #[tool]
    fn nothing(&self) {}
}

struct C;

#[tools]
impl C {
    fn helper(&self) {}
}

#[tools]
fn not_an_impl() {}

#[tool]
struct NotAFunction;

fn main() {}
