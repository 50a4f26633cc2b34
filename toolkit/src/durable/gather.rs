//! [`Gather`]: statements of many callers made as one (a group commit).
//!
//! Every caller hands in its item and waits for its answer. When nothing is being written, the
//! first item starts a write at once (no waiting for company); items that arrive while a write
//! is under way go together in the next one. Under load, one statement serves many callers;
//! alone, a caller waits for its own statement only. A caller may first *gather* its
//! neighbours: it yields once before the write starts, so that the futures polled with it on
//! the same task (the calls of one model turn, run concurrently by `Toolkit::call_all`) join
//! the same write.
//!
//! Writes run on tasks of their own: a caller that goes away (its future dropped) takes no
//! one's write with it, and its own item is written all the same.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use crate::storage::DatabaseError;

/// Writes a batch: one answer per item, in their order.
pub(super) type Write<T, R> =
    Box<dyn Fn(Vec<T>) -> BoxFuture<'static, Vec<Result<R, DatabaseError>>> + Send + Sync>;

pub(super) struct Gather<T, R> {
    state: Mutex<State<T, R>>,
    write: Write<T, R>,
    /// Most items in one write.
    most: usize,
}

struct State<T, R> {
    waiting: Vec<(T, oneshot::Sender<Result<R, DatabaseError>>)>,
    /// A caller is gathering the items polled with it (see [`Gather::run`]).
    gathering: bool,
    /// A task is writing.
    writing: bool,
}

impl<T: Send + 'static, R: Send + 'static> Gather<T, R> {
    pub(super) fn new(most: usize, write: Write<T, R>) -> Arc<Self> {
        Arc::new(Gather {
            state: Mutex::new(State {
                waiting: Vec::new(),
                gathering: false,
                writing: false,
            }),
            write,
            most: most.max(1),
        })
    }

    /// Write `item` with whatever else is waiting, and return its answer. With `gather`, a
    /// caller that would start a write first yields once, so that the futures polled with it
    /// hand in their items too.
    pub(super) async fn run(self: &Arc<Self>, item: T, gather: bool) -> Result<R, DatabaseError> {
        let (answer, answered) = oneshot::channel();
        let lead = {
            let mut state = crate::util::lock(&self.state);
            state.waiting.push((item, answer));
            let lead = !state.writing && !state.gathering;
            if lead && gather {
                state.gathering = true;
            }
            lead
        };
        if lead {
            if gather {
                // Dropped (here, or with this future while it yields): the write starts.
                let gathering = Gathering(self);
                tokio::task::yield_now().await;
                drop(gathering);
            } else {
                self.start(false);
            }
        }
        answered.await.unwrap_or_else(|_| {
            Err(DatabaseError::message(
                "the job database",
                "the write of this statement was abandoned",
            ))
        })
    }

    /// Start a writing task unless one runs (`gathered`: the caller that was gathering ends).
    fn start(self: &Arc<Self>, gathered: bool) {
        {
            let mut state = crate::util::lock(&self.state);
            if gathered {
                state.gathering = false;
            }
            if state.writing || state.waiting.is_empty() {
                return;
            }
            state.writing = true;
        }
        let me = Arc::clone(self);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    let writing = Writing(&me);
                    writing.0.write_all().await;
                });
            }
            Err(_) => {
                // Not reached: callers are futures on a runtime. Nothing is left waiting.
                let waiting = {
                    let mut state = crate::util::lock(&self.state);
                    state.writing = false;
                    std::mem::take(&mut state.waiting)
                };
                drop(waiting);
            }
        }
    }

    /// Write batches until nothing waits.
    async fn write_all(self: &Arc<Self>) {
        loop {
            let batch: Vec<_> = {
                let mut state = crate::util::lock(&self.state);
                if state.waiting.is_empty() {
                    state.writing = false;
                    return;
                }
                let n = state.waiting.len().min(self.most);
                state.waiting.drain(..n).collect()
            };
            let (items, answers): (Vec<T>, Vec<_>) = batch.into_iter().unzip();
            let count = items.len();
            let mut results = (self.write)(items).await.into_iter();
            for answer in answers {
                let result = results.next().unwrap_or_else(|| {
                    Err(DatabaseError::message(
                        "the job database",
                        format!("a batch of {count} statements got fewer answers"),
                    ))
                });
                // A caller that went away does not need its answer.
                let _ = answer.send(result);
            }
        }
    }
}

/// A caller gathering its neighbours; when dropped, the write starts.
struct Gathering<'a, T: Send + 'static, R: Send + 'static>(&'a Arc<Gather<T, R>>);

impl<T: Send + 'static, R: Send + 'static> Drop for Gathering<'_, T, R> {
    fn drop(&mut self) {
        self.0.start(true);
    }
}

/// The writing task; if it ends early (a panic), the next caller starts another.
struct Writing<'a, T: Send + 'static, R: Send + 'static>(&'a Arc<Gather<T, R>>);

impl<T: Send + 'static, R: Send + 'static> Drop for Writing<'_, T, R> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            crate::util::lock(&self.0.state).writing = false;
        }
    }
}
