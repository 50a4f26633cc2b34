//! [`ToolSnapshot`]: the tools active in one scope at one moment.
//!
//! Built only when the active set changes, from dense bit masks (one row of group bits per
//! tool), and shared afterwards: taking one is two reference counts, whatever the number of
//! tools. It holds indices into the toolkit's definition table rather than a handle per tool,
//! so a rebuild over 10,000 tools touches no per-tool reference count.

use std::sync::Arc;

use super::compile::Entry;
use crate::tool::ToolDefinition;

/// Group membership of every tool as bits: row `i` (`stride` words) holds tool `i`'s groups.
pub(super) struct GroupMasks {
    stride: usize,
    bits: Vec<u64>,
    /// Tools in no group are always active (unless deferred).
    ungrouped: Vec<bool>,
    /// Deferred tools: active only once found.
    deferred: Vec<bool>,
}

impl GroupMasks {
    pub(super) fn new(
        groups: usize,
        tools: impl ExactSizeIterator<Item = Vec<usize>>,
        deferred: Vec<bool>,
    ) -> Self {
        let stride = groups.div_ceil(64).max(1);
        let mut bits = vec![0u64; stride * tools.len()];
        let mut ungrouped = Vec::with_capacity(tools.len());
        for (i, tool_groups) in tools.enumerate() {
            ungrouped.push(tool_groups.is_empty());
            for g in tool_groups {
                bits[i * stride + g / 64] |= 1 << (g % 64);
            }
        }
        GroupMasks {
            stride,
            bits,
            ungrouped,
            deferred,
        }
    }

    /// The active groups as a bit row.
    pub(super) fn row(&self, active: &[bool]) -> Vec<u64> {
        let mut row = vec![0u64; self.stride];
        for (g, _) in active.iter().enumerate().filter(|(_, on)| **on) {
            row[g / 64] |= 1 << (g % 64);
        }
        row
    }

    /// Whether tool `tool` is in no group and not deferred (and so always active).
    pub(super) fn is_always_active(&self, tool: usize) -> bool {
        self.ungrouped[tool] && !self.deferred[tool]
    }

    /// The first group tool `tool` belongs to, if any.
    pub(super) fn first_group(&self, tool: usize) -> Option<usize> {
        let row = &self.bits[tool * self.stride..(tool + 1) * self.stride];
        row.iter()
            .enumerate()
            .find(|(_, w)| **w != 0)
            .map(|(i, w)| i * 64 + w.trailing_zeros() as usize)
    }

    fn in_active_group(&self, tool: usize, row: &[u64]) -> bool {
        self.ungrouped[tool]
            || self.bits[tool * self.stride..(tool + 1) * self.stride]
                .iter()
                .zip(row)
                .any(|(t, a)| t & a != 0)
    }
}

/// The tool definitions active in one scope at one moment, in registration order (tools of
/// [dynamic sets](crate::toolkit::DynamicTools) last, in the order their sets were registered).
///
/// Cheap to clone and to keep: an agent takes one per model turn so that the tools it shows
/// the model and the tools it lets the model call are the same set.
#[derive(Clone)]
pub struct ToolSnapshot {
    table: Arc<[ToolDefinition]>,
    active: Arc<[u32]>,
    member: Arc<[u64]>,
    /// Active tools of dynamic sets; `None` when the toolkit has no dynamic set.
    dynamic: Option<Arc<[Arc<Entry>]>>,
    /// Deferred tools of active groups not found yet: registrations, then dynamic tools.
    deferred: Arc<[u32]>,
    deferred_member: Arc<[u64]>,
    deferred_dynamic: Option<Arc<[Arc<Entry>]>>,
}

impl ToolSnapshot {
    /// The snapshot for these active groups; `found` says whether a deferred tool (by
    /// registration index) was found in the scope.
    pub(super) fn build(
        table: &Arc<[ToolDefinition]>,
        masks: &GroupMasks,
        active_groups: &[bool],
        found: impl Fn(usize) -> bool,
    ) -> Self {
        let row = masks.row(active_groups);
        let mut active = Vec::with_capacity(table.len());
        let mut deferred = Vec::new();
        let mut member = vec![0u64; table.len().div_ceil(64)];
        let mut deferred_member = member.clone();
        for i in 0..table.len() {
            if !masks.in_active_group(i, &row) {
                continue;
            }
            if masks.deferred[i] && !found(i) {
                deferred.push(i as u32);
                deferred_member[i / 64] |= 1 << (i % 64);
                continue;
            }
            active.push(i as u32);
            member[i / 64] |= 1 << (i % 64);
        }
        ToolSnapshot {
            table: table.clone(),
            active: active.into(),
            member: member.into(),
            dynamic: None,
            deferred: deferred.into(),
            deferred_member: deferred_member.into(),
            deferred_dynamic: None,
        }
    }

    /// The same snapshot with these tools of dynamic sets, active and deferred, after the
    /// registered ones.
    pub(super) fn with_dynamic(
        mut self,
        dynamic: Vec<Arc<Entry>>,
        deferred: Vec<Arc<Entry>>,
    ) -> Self {
        self.dynamic = Some(dynamic.into());
        self.deferred_dynamic = Some(deferred.into());
        self
    }

    /// Deferred tools of active groups not found yet in this scope: what a search may find.
    /// Registered tools first, in registration order, then tools of dynamic sets.
    pub fn deferred(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> + '_ {
        Chained {
            fixed: self.deferred.iter().map(|&i| &self.table[i as usize]),
            dynamic: self
                .deferred_dynamic_entries()
                .iter()
                .map(|e| &e.definition),
        }
    }

    /// The deferred tool called `name` not found yet, if any (a scan: for a few names).
    pub fn get_deferred(&self, name: &str) -> Option<&ToolDefinition> {
        self.deferred().find(|d| d.name() == name)
    }

    /// Registration indices of the deferred tools not found yet.
    pub(super) fn deferred_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.deferred.iter().map(|&i| i as usize)
    }

    pub(super) fn deferred_dynamic_entries(&self) -> &[Arc<Entry>] {
        self.deferred_dynamic.as_deref().unwrap_or(&[])
    }

    /// How many tools are active.
    pub fn len(&self) -> usize {
        self.active.len() + self.dynamic_entries().len()
    }

    /// Whether no tool is active.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The active definitions, in registration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &ToolDefinition> + '_ {
        Chained {
            fixed: self.active.iter().map(|&i| &self.table[i as usize]),
            dynamic: self.dynamic_entries().iter().map(|e| &e.definition),
        }
    }

    /// The active tools of dynamic sets.
    pub(super) fn dynamic_entries(&self) -> &[Arc<Entry>] {
        self.dynamic.as_deref().unwrap_or(&[])
    }

    /// The active definition called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&ToolDefinition> {
        self.iter().find(|d| d.name() == name)
    }

    /// The active definitions as an owned list (one reference count per tool).
    pub fn to_vec(&self) -> Vec<ToolDefinition> {
        self.iter().cloned().collect()
    }

    /// Whether the tool at registration index `index` is active.
    pub(super) fn contains_index(&self, index: usize) -> bool {
        bit(&self.member, index)
    }

    /// Whether the tool at registration index `index` is deferred and not found yet (in an
    /// active group).
    pub(super) fn contains_deferred_index(&self, index: usize) -> bool {
        bit(&self.deferred_member, index)
    }

    pub(super) fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.active.iter().map(|&i| i as usize)
    }
}

fn bit(words: &[u64], index: usize) -> bool {
    words
        .get(index / 64)
        .is_some_and(|w| w & (1 << (index % 64)) != 0)
}

/// Static then dynamic definitions; `std::iter::Chain` is not `ExactSizeIterator`.
struct Chained<A, B> {
    fixed: A,
    dynamic: B,
}

impl<'a, A, B> Iterator for Chained<A, B>
where
    A: Iterator<Item = &'a ToolDefinition>,
    B: Iterator<Item = &'a ToolDefinition>,
{
    type Item = &'a ToolDefinition;

    fn next(&mut self) -> Option<Self::Item> {
        self.fixed.next().or_else(|| self.dynamic.next())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (a, _) = self.fixed.size_hint();
        let (b, _) = self.dynamic.size_hint();
        (a + b, Some(a + b))
    }
}

impl<'a, A, B> ExactSizeIterator for Chained<A, B>
where
    A: ExactSizeIterator<Item = &'a ToolDefinition>,
    B: ExactSizeIterator<Item = &'a ToolDefinition>,
{
}

impl std::fmt::Debug for ToolSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|d| d.name()))
            .finish()
    }
}

impl<'a> IntoIterator for &'a ToolSnapshot {
    type Item = &'a ToolDefinition;
    type IntoIter = Box<dyn Iterator<Item = &'a ToolDefinition> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}
