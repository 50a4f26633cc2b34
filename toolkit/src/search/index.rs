//! [`ToolIndex`]: the BM25 index, its [`SearchSettings`] and the [`SearchHit`]s it answers
//! with. Terms (and pairs of adjacent terms) are numbered once; postings are lists of (tool,
//! count) per term; tool lengths and name terms sit in dense arrays by tool slot. A search reads
//! the postings of the query's terms and one length per posting, then looks at tools' names and
//! keys only for the few it ranks.

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;
use smallvec::SmallVec;

use super::text::{self, Stemming};
use crate::tool::ToolDefinition;

/// BM25 settings; the defaults are the ones measured in BENCHMARKS.md ("Tool search"): chosen
/// on the development halves of two corpora (BFCL's questions, and real MCP servers' tools
/// with agent-written queries), where each gained on every source and lost on none.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SearchSettings {
    /// Term-frequency saturation.
    pub k1: f64,
    /// Length normalisation, 0 (none) to 1 (full).
    pub b: f64,
    /// How much a pair of adjacent query terms found adjacent in a tool's name or description
    /// counts, relative to a single term (0: pairs are not scored).
    pub pair_weight: f64,
    /// Added to a tool's score times the part of its name's terms the query has (0: none).
    pub name_coverage: f64,
    /// List each name once, at its best: definitions added under other keys with
    /// [`ToolIndex::insert_as`] that share a name are one tool.
    pub one_per_name: bool,
    /// How words are reduced to stems, in tools and queries alike.
    pub stemming: Stemming,
    /// Saturation of a query word said several times (BM25's `k3`): it counts
    /// `n·(k3+1)/(k3+n)` times; 0 counts each distinct word once.
    pub query_k3: f64,
    /// How much a term counts in a tool's name, description and parameters (BM25F: each
    /// field's term counts and length are weighted before saturation); all 1 is one bag.
    pub fields: FieldWeights,
    /// Match words written joined on one side and apart on the other, against the catalog's
    /// own vocabulary: two or three adjacent query words whose joined form is a term of the
    /// catalog ("file system" finds `filesystem`, "how to cook" `howtocook`) add that term, and
    /// a query word the catalog does not have that splits into two words it has ("github"
    /// where tools say "GitHub") adds those.
    pub join_words: bool,
    /// A query that asks for several things ("…, then …", "… and also …"; see
    /// [`ToolIndex::search`]) is ranked as a whole and per need, the rankings fused, so that
    /// every need has tools near the top.
    pub split_needs: bool,
    /// With [`Embeddings`](super::Embeddings) (feature `semantic`): the share of the ranking
    /// by meaning when the two are mixed — each ranking's top 50 scaled to 0..1 (its best 1,
    /// its 50th 0), then `(1 - w)·BM25 + w·meaning`. 0 leaves BM25 alone, 1 meaning alone;
    /// without embeddings it is not used.
    pub semantic_weight: f64,
}

/// The weight of each field of a tool ([`SearchSettings::fields`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct FieldWeights {
    /// The tool's name.
    pub name: f64,
    /// Its description.
    pub description: f64,
    /// Its parameters' names, descriptions and `enum` values.
    pub parameters: f64,
}

impl FieldWeights {
    /// These weights.
    pub fn new(name: f64, description: f64, parameters: f64) -> Self {
        FieldWeights {
            name,
            description,
            parameters,
        }
    }

    fn is_one_bag(&self) -> bool {
        *self == FieldWeights::new(1.0, 1.0, 1.0)
    }

    /// A length (or a count) of `total` terms, `name` of them in the name and `parameters` in
    /// the parameters, with the fields weighted (BM25F).
    fn weigh(&self, total: f64, name: f64, parameters: f64) -> f64 {
        self.name * name
            + self.parameters * parameters
            + self.description * (total - name - parameters)
    }
}

impl Default for FieldWeights {
    fn default() -> Self {
        FieldWeights::new(1.0, 1.0, 1.0)
    }
}

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            k1: 1.2,
            b: 0.5,
            pair_weight: 0.15,
            name_coverage: 1.5,
            one_per_name: true,
            stemming: Stemming::Snowball,
            query_k3: 1.2,
            fields: FieldWeights::new(1.0, 1.0, 0.5),
            join_words: true,
            split_needs: false,
            semantic_weight: 0.3,
        }
    }
}

impl SearchSettings {
    crate::util::setters! {
        /// The same settings with this `k1`.
        pub fn with_k1(k1: f64) => k1 = k1;

        /// The same settings with this `b`.
        pub fn with_b(b: f64) => b = b;

        /// The same settings with this [`pair_weight`](Self::pair_weight).
        pub fn with_pair_weight(weight: f64) => pair_weight = weight;

        /// The same settings with this [`name_coverage`](Self::name_coverage).
        pub fn with_name_coverage(weight: f64) => name_coverage = weight;

        /// The same settings with this [`one_per_name`](Self::one_per_name).
        pub fn with_one_per_name(on: bool) => one_per_name = on;

        /// The same settings with this [`stemming`](Self::stemming).
        pub fn with_stemming(stemming: Stemming) => stemming = stemming;

        /// The same settings with this [`query_k3`](Self::query_k3).
        pub fn with_query_k3(k3: f64) => query_k3 = k3;

        /// The same settings with these [`fields`](Self::fields) weights.
        pub fn with_fields(fields: FieldWeights) => fields = fields;

        /// The same settings with this [`join_words`](Self::join_words).
        pub fn with_join_words(on: bool) => join_words = on;

        /// The same settings with this [`split_needs`](Self::split_needs).
        pub fn with_split_needs(on: bool) => split_needs = on;

        /// The same settings with this [`semantic_weight`](Self::semantic_weight).
        pub fn with_semantic_weight(weight: f64) => semantic_weight = weight;
    }

    /// Okapi BM25 alone with these settings' `k1` and `b`: no pairs, no name coverage.
    pub fn plain(self) -> Self {
        self.with_pair_weight(0.0).with_name_coverage(0.0)
    }
}

/// One tool a search found.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// What the index knows it by: its name, unless it was added with
    /// [`ToolIndex::insert_as`].
    pub key: String,
    /// The first sentence of its description (at most 160 characters).
    pub summary: String,
    /// Its BM25 score, or with [`Embeddings`](super::Embeddings) the mixed score (0 to 1);
    /// higher is better, comparable within one search only.
    pub score: f64,
}

/// [`ToolIndex::words`]' mark of a written word that makes no term.
const NO_TERM: u32 = u32::MAX;

struct Doc {
    /// What the index knows it by ([`ToolIndex::insert_as`]); the tool's name otherwise.
    key: String,
    name: String,
    summary: String,
    /// Its distinct terms and pairs (to remove its postings).
    terms: Box<[u32]>,
}

#[derive(Clone, Copy)]
struct Posting {
    doc: u32,
    /// How often the term is in the tool (saturating).
    count: u16,
    /// How often it is in the tool's name.
    in_name: u16,
    /// How often it is in the tool's parameters.
    in_parameters: u16,
}

/// A BM25 index over tool definitions, keyed by tool name. See the [module](super) for the
/// method.
///
/// ```
/// use agent_toolkit::ToolDefinition;
/// use agent_toolkit::search::ToolIndex;
/// use serde_json::json;
///
/// let mut index = ToolIndex::new();
/// index.insert(&ToolDefinition::new("get_weather", "Current weather for a city.",
///     json!({"type": "object", "properties": {"city": {"type": "string"}}})));
/// index.insert(&ToolDefinition::new("send_email", "Send an email.", json!({"type": "object"})));
/// let hits = index.search("what's the weather in Paris", 5);
/// assert_eq!(hits[0].name, "get_weather");
/// ```
pub struct ToolIndex {
    settings: SearchSettings,
    /// Term → id.
    vocabulary: FxHashMap<Box<str>, u32>,
    /// Each word as tools write it → its term's id ([`NO_TERM`] for a common word): a catalog
    /// repeats its words, so each distinct written word is lowercased, stemmed and looked up
    /// in the vocabulary once (terms are never removed, so the ids stay right). Words of up to
    /// 16 bytes (nearly all) are keyed by their bytes as one number, compared without `memcmp`.
    short_words: FxHashMap<u128, u32>,
    words: FxHashMap<Box<str>, u32>,
    /// (term, next term) → id, in the same id space as terms.
    pairs: FxHashMap<(u32, u32), u32>,
    /// Postings by term id (most pairs are in one or two tools: kept inline).
    postings: Vec<SmallVec<[Posting; 2]>>,
    /// By slot: the tool (`None` for a free slot), its length in terms, its name's length.
    docs: Vec<Option<Doc>>,
    lengths: Vec<u32>,
    name_lengths: Vec<u16>,
    parameter_lengths: Vec<u32>,
    /// By slot, the tool's length as BM25 reads it: its fields weighted, unless they are one
    /// bag (worked out once, not for each posting of each search).
    weighted_lengths: Vec<f64>,
    free: Vec<u32>,
    by_key: FxHashMap<String, u32>,
    /// The summed length of every tool, and of every tool's name and parameters.
    total: u64,
    total_name: u64,
    total_parameters: u64,
    live: u32,
    /// Reused by each insertion.
    scratch: Scratch,
    /// The model and each slot's vector, when ranking by meaning too.
    #[cfg(feature = "semantic")]
    semantic: Option<Semantic>,
}

/// The embedding model of an index and its tools' vectors.
#[cfg(feature = "semantic")]
struct Semantic {
    model: std::sync::Arc<super::Embeddings>,
    /// By slot, [`Embeddings::dimensions`](super::Embeddings::dimensions) numbers each (zeros
    /// for a free slot), as bytes: `scales[slot] · vectors[i]` is the number. A search reads
    /// every vector, so they are kept a quarter of their f32 size (10,000 tools of 384
    /// numbers: 3.8 MB, not 15).
    vectors: Vec<i8>,
    scales: Vec<f32>,
    /// Reused by each insertion.
    scratch: Vec<f32>,
}

#[cfg(feature = "semantic")]
impl Semantic {
    /// Keep `vector` at `slot`, as bytes.
    fn store(&mut self, slot: usize, vector: &[f32]) {
        let d = vector.len();
        let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if largest > 0.0 { largest / 127.0 } else { 1.0 };
        for (out, x) in self.vectors[slot * d..(slot + 1) * d]
            .iter_mut()
            .zip(vector)
        {
            *out = (x / scale).round() as i8;
        }
        self.scales[slot] = scale;
    }

    /// The dot product of `query` with the vector at `slot`.
    fn dot(&self, slot: usize, query: &[f32]) -> f32 {
        let d = query.len();
        let vector = &self.vectors[slot * d..(slot + 1) * d];
        // Eight sums side by side, so that the compiler can use vector instructions (one sum
        // would have to add in order).
        let mut sums = [0f32; 8];
        let (q_chunks, v_chunks) = (query.chunks_exact(8), vector.chunks_exact(8));
        let (q_rest, v_rest) = (q_chunks.remainder(), v_chunks.remainder());
        for (q, v) in q_chunks.zip(v_chunks) {
            for lane in 0..8 {
                sums[lane] += q[lane] * f32::from(v[lane]);
            }
        }
        let rest: f32 = q_rest
            .iter()
            .zip(v_rest)
            .map(|(q, v)| q * f32::from(*v))
            .sum();
        (sums.iter().sum::<f32>() + rest) * self.scales[slot]
    }
}

/// What an insertion works in, kept to be reused.
#[derive(Default)]
struct Scratch {
    name: Vec<u32>,
    description: Vec<u32>,
    parameters: Vec<u32>,
    buffer: String,
    /// By term (and pair) id, how often the tool has it: zero between insertions (an
    /// insertion counts in one pass, then clears what it touched).
    counts: Vec<Counts>,
    /// The terms and pairs of the tool, in the order first seen.
    touched: Vec<u32>,
}

/// How often a tool has a term: in all, in its name, in its parameters (saturating).
#[derive(Clone, Copy, Default)]
struct Counts {
    all: u16,
    name: u16,
    parameters: u16,
}

impl Default for ToolIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.live)
            .field("terms", &self.vocabulary.len())
            .finish()
    }
}

impl ToolIndex {
    /// An empty index with the default settings.
    pub fn new() -> Self {
        Self::with_settings(SearchSettings::default())
    }

    /// An empty index with these settings.
    pub fn with_settings(settings: SearchSettings) -> Self {
        ToolIndex {
            settings,
            vocabulary: FxHashMap::default(),
            short_words: FxHashMap::default(),
            words: FxHashMap::default(),
            pairs: FxHashMap::default(),
            postings: Vec::new(),
            docs: Vec::new(),
            lengths: Vec::new(),
            name_lengths: Vec::new(),
            parameter_lengths: Vec::new(),
            weighted_lengths: Vec::new(),
            free: Vec::new(),
            by_key: FxHashMap::default(),
            total: 0,
            total_name: 0,
            total_parameters: 0,
            live: 0,
            scratch: Scratch::default(),
            #[cfg(feature = "semantic")]
            semantic: None,
        }
    }

    /// An empty index with these settings that also ranks tools by meaning with `embeddings`
    /// (feature `semantic`): each tool's name words and description are embedded as it is
    /// added, the query when searched; the top tools by cosine similarity and BM25's are fused
    /// ([`SearchSettings::semantic_weight`]), so a tool can be found with none of its words.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use agent_toolkit::search::{Embeddings, SearchSettings, ToolIndex};
    ///
    /// let model = Arc::new(Embeddings::from_dir("models/potion-base-8M")?);
    /// let index = ToolIndex::with_embeddings(SearchSettings::default(), model);
    /// # Ok::<(), agent_toolkit::search::EmbeddingsError>(())
    /// ```
    #[cfg(feature = "semantic")]
    pub fn with_embeddings(
        settings: SearchSettings,
        embeddings: std::sync::Arc<super::Embeddings>,
    ) -> Self {
        let mut index = Self::with_settings(settings);
        index.semantic = Some(Semantic {
            model: embeddings,
            vectors: Vec::new(),
            scales: Vec::new(),
            scratch: Vec::new(),
        });
        index
    }

    /// An index of these definitions.
    pub fn from_definitions<'a>(definitions: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let mut index = Self::new();
        for definition in definitions {
            index.insert(definition);
        }
        index
    }

    /// How many tools it holds.
    pub fn len(&self) -> usize {
        self.live as usize
    }

    /// Whether it holds no tool.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Whether it holds a tool under `key` (its name, unless added with
    /// [`insert_as`](Self::insert_as)).
    pub fn contains(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// Add a tool, replacing one of the same name.
    pub fn insert(&mut self, definition: &ToolDefinition) {
        self.insert_as(definition.name(), definition);
    }

    /// Add a tool under `key` (what [`SearchHit::key`] and [`remove`](Self::remove) name),
    /// replacing one of the same key: for catalogs where several definitions share a name
    /// (versions of one tool, one per server). Its name's words are indexed, not the key's.
    pub fn insert_as(&mut self, key: &str, definition: &ToolDefinition) {
        self.remove(key);
        let mut scratch = std::mem::take(&mut self.scratch);
        let Scratch {
            name,
            description,
            parameters,
            buffer,
            counts,
            touched,
        } = &mut scratch;
        name.clear();
        description.clear();
        parameters.clear();
        let analyzer = text::Analyzer::new(self.settings.stemming);
        let mut ids = |text: &str, field: &mut Vec<u32>| {
            analyzer.each_written_word(text, |word| {
                field.extend(self.word_id(analyzer, word, buffer));
            });
        };
        ids(definition.name(), name);
        ids(definition.description(), description);
        walk(
            definition.parameters(),
            &mut |text| ids(text, parameters),
            0,
        );
        let length = (name.len() + description.len() + parameters.len()) as u32;

        // Pairs of adjacent terms, within the name and within the description.
        let pairs: SmallVec<[u32; 64]> = [&*name, &*description]
            .into_iter()
            .flat_map(|field| field.windows(2))
            .map(|w| self.pair_id(w[0], w[1]))
            .collect();
        // Count each term and pair in one pass, by id.
        counts.resize(self.postings.len(), Counts::default());
        let mut count = |term: u32, in_name: u16, in_parameters: u16| {
            let c = &mut counts[term as usize];
            if c.all == 0 {
                touched.push(term);
            }
            c.all = c.all.saturating_add(1);
            c.name = c.name.saturating_add(in_name);
            c.parameters = c.parameters.saturating_add(in_parameters);
        };
        name.iter().for_each(|&t| count(t, 1, 0));
        description
            .iter()
            .chain(&pairs)
            .for_each(|&t| count(t, 0, 0));
        parameters.iter().for_each(|&t| count(t, 0, 1));
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.docs.push(None);
                self.lengths.push(0);
                self.name_lengths.push(0);
                self.parameter_lengths.push(0);
                self.weighted_lengths.push(0.0);
                #[cfg(feature = "semantic")]
                if let Some(semantic) = &mut self.semantic {
                    let d = semantic.model.dimensions();
                    semantic.vectors.resize(semantic.vectors.len() + d, 0);
                    semantic.scales.push(0.0);
                }
                (self.docs.len() - 1) as u32
            }
        };
        #[cfg(feature = "semantic")]
        if let Some(semantic) = &mut self.semantic {
            // The name's words (`get_weather` → "get weather") and the description.
            buffer.clear();
            analyzer.each_word(definition.name(), |w| {
                buffer.push_str(w);
                buffer.push(' ');
            });
            buffer.push_str(definition.description());
            let mut vector = std::mem::take(&mut semantic.scratch);
            vector.resize(semantic.model.dimensions(), 0.0);
            semantic.model.embed_into(buffer, &mut vector);
            semantic.store(slot as usize, &vector);
            semantic.scratch = vector;
        }
        for &term in touched.iter() {
            let c = std::mem::take(&mut counts[term as usize]);
            self.postings[term as usize].push(Posting {
                doc: slot,
                count: c.all,
                in_name: c.name,
                in_parameters: c.parameters,
            });
        }
        let terms: Box<[u32]> = touched.as_slice().into();
        touched.clear();
        let name_length = u16::try_from(name.len()).unwrap_or(u16::MAX);
        let parameter_length = parameters.len() as u32;
        self.scratch = scratch;
        let i = slot as usize;
        self.docs[i] = Some(Doc {
            key: key.to_string(),
            name: definition.name().to_string(),
            summary: summary(definition.description()),
            terms,
        });
        self.lengths[i] = length;
        self.name_lengths[i] = name_length;
        self.parameter_lengths[i] = parameter_length;
        let fields = self.settings.fields;
        self.weighted_lengths[i] = if fields.is_one_bag() {
            f64::from(length)
        } else {
            fields.weigh(
                f64::from(length),
                f64::from(name_length),
                f64::from(parameter_length),
            )
        };
        self.total += u64::from(length);
        self.total_name += u64::from(name_length);
        self.total_parameters += u64::from(parameter_length);
        self.by_key.insert(key.to_string(), slot);
        self.live += 1;
    }

    /// The catalog's terms that `query` writes apart or joined ([`SearchSettings::join_words`]):
    /// two or three adjacent words joined, and each `unknown` term split in two.
    fn joined_and_split(
        &self,
        analyzer: text::Analyzer,
        query: &str,
        unknown: &[String],
    ) -> Vec<u32> {
        let mut found = Vec::new();
        let mut raw: Vec<String> = Vec::new();
        analyzer.each_word(query, |w| raw.push(w.to_owned()));
        let mut joined = String::new();
        for n in [2, 3] {
            for window in raw.windows(n) {
                joined.clear();
                window.iter().for_each(|w| joined.push_str(w));
                analyzer.stem(&mut joined);
                if let Some(&t) = self.vocabulary.get(joined.as_str()) {
                    found.push(t);
                }
            }
        }
        let mut half = String::new();
        for term in unknown {
            if term.len() < 6 || !term.bytes().all(|b| b.is_ascii_lowercase()) {
                continue;
            }
            // The most even cut whose both halves (3 letters or more) are terms.
            let mut cuts: Vec<usize> = (3..=term.len() - 3).collect();
            cuts.sort_by_key(|&i| (term.len() as isize - 2 * i as isize).unsigned_abs());
            let known = |piece: &str, half: &mut String| {
                half.clear();
                half.push_str(piece);
                analyzer.stem(half);
                self.vocabulary.get(half.as_str()).copied()
            };
            for i in cuts {
                if let (Some(a), Some(b)) =
                    (known(&term[..i], &mut half), known(&term[i..], &mut half))
                {
                    found.extend([a, b]);
                    break;
                }
            }
        }
        found
    }

    /// The id of the term `word` (as a tool writes it) makes, `None` for a common word.
    fn word_id(
        &mut self,
        analyzer: text::Analyzer,
        word: &str,
        buffer: &mut String,
    ) -> Option<u32> {
        // A word has no zero byte (it is letters, digits and bytes of other characters), so
        // zero padding keeps two words of up to 16 bytes apart.
        let short = (word.len() <= 16).then(|| {
            let mut bytes = [0u8; 16];
            bytes[..word.len()].copy_from_slice(word.as_bytes());
            u128::from_le_bytes(bytes)
        });
        let known = match short {
            Some(code) => self.short_words.get(&code),
            None => self.words.get(word),
        };
        let id = match known {
            Some(&id) => id,
            None => {
                let id = if analyzer.term(word, buffer) {
                    self.term_id(buffer)
                } else {
                    NO_TERM
                };
                match short {
                    Some(code) => self.short_words.insert(code, id),
                    None => self.words.insert(word.into(), id),
                };
                id
            }
        };
        (id != NO_TERM).then_some(id)
    }

    fn term_id(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.vocabulary.get(term) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.postings.push(SmallVec::new());
        self.vocabulary.insert(term.into(), id);
        id
    }

    fn pair_id(&mut self, first: u32, second: u32) -> u32 {
        let next = self.postings.len() as u32;
        let id = *self.pairs.entry((first, second)).or_insert(next);
        if id == next {
            self.postings.push(SmallVec::new());
        }
        id
    }

    /// Remove the tool under `key` (its name, unless added with
    /// [`insert_as`](Self::insert_as)); whether there was one.
    pub fn remove(&mut self, key: &str) -> bool {
        let Some(slot) = self.by_key.remove(key) else {
            return false;
        };
        let i = slot as usize;
        let Some(doc) = self.docs[i].take() else {
            return false;
        };
        for &term in doc.terms.iter() {
            self.postings[term as usize].retain(|p| p.doc != slot);
        }
        self.total -= u64::from(self.lengths[i]);
        self.total_name -= u64::from(self.name_lengths[i]);
        self.total_parameters -= u64::from(self.parameter_lengths[i]);
        self.lengths[i] = 0;
        self.name_lengths[i] = 0;
        self.parameter_lengths[i] = 0;
        self.weighted_lengths[i] = 0.0;
        #[cfg(feature = "semantic")]
        if let Some(semantic) = &mut self.semantic {
            let d = semantic.model.dimensions();
            semantic.vectors[i * d..(i + 1) * d].fill(0);
            semantic.scales[i] = 0.0;
        }
        self.free.push(slot);
        self.live -= 1;
        true
    }

    /// The `limit` best tools for `query`, best first; tools sharing no term with it are
    /// never returned, unless the index ranks by meaning too
    /// ([`with_embeddings`](Self::with_embeddings)).
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.search_where(query, limit, |_| true)
    }

    /// [`search`](Self::search) among the tools `keep` accepts (by key: the name, unless added
    /// with [`insert_as`](Self::insert_as)). `keep` is asked only about the best tools, in
    /// rank order, until `limit` are kept.
    pub fn search_where(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<SearchHit> {
        if limit == 0 || self.live == 0 {
            return Vec::new();
        }
        let ranked = match needs(query) {
            Some(parts) if self.settings.split_needs => self.fused(query, &parts),
            _ => self.scored(query),
        };
        #[cfg(feature = "semantic")]
        let ranked = match &self.semantic {
            Some(semantic) if self.settings.semantic_weight > 0.0 => {
                self.with_meaning(query, ranked, semantic)
            }
            _ => ranked,
        };
        self.select(ranked, limit, keep)
    }

    /// The tools `query` touches with their scores (unordered).
    fn scored(&self, query: &str) -> Vec<(f64, u32)> {
        let SearchSettings {
            k1,
            b,
            pair_weight,
            name_coverage,
            stemming,
            query_k3,
            fields,
            join_words,
            ..
        } = self.settings;
        // The query's terms (unknown ones as `None`: they still separate pairs), then its
        // distinct known terms in the order they first appear (with how often each is said),
        // then its pairs.
        let analyzer = text::Analyzer::new(stemming);
        let mut tokens: Vec<Option<u32>> = Vec::new();
        let mut unknown: Vec<String> = Vec::new();
        analyzer.each_term(query, |t| {
            let id = self.vocabulary.get(t).copied();
            if id.is_none() && join_words {
                unknown.push(t.to_owned());
            }
            tokens.push(id);
        });
        let mut words: Vec<(u32, f64)> = Vec::new();
        for &t in tokens.iter().flatten() {
            match words.iter_mut().find(|(w, _)| *w == t) {
                Some((_, said)) => *said += 1.0,
                None => words.push((t, 1.0)),
            }
        }
        if join_words {
            for t in self.joined_and_split(analyzer, query, &unknown) {
                if !words.iter().any(|(w, _)| *w == t) {
                    words.push((t, 1.0));
                }
            }
        }
        let mut weighted: Vec<(u32, f64)> = words
            .iter()
            .map(|&(t, said)| {
                let weight = if query_k3 > 0.0 {
                    said * (query_k3 + 1.0) / (query_k3 + said)
                } else {
                    1.0
                };
                (t, weight)
            })
            .collect();
        if pair_weight > 0.0 {
            for w in tokens.windows(2) {
                if let [Some(a), Some(b)] = *w
                    && let Some(&pair) = self.pairs.get(&(a, b))
                    && !weighted.iter().any(|(t, _)| *t == pair)
                {
                    weighted.push((pair, pair_weight));
                }
            }
        }

        let n = f64::from(self.live);
        let one_bag = fields.is_one_bag();
        let average = if one_bag {
            self.total as f64 / n
        } else {
            fields.weigh(
                self.total as f64,
                self.total_name as f64,
                self.total_parameters as f64,
            ) / n
        };
        // Each slot's score, and how many of each tool's name terms the query has: zeros kept
        // per thread between searches (the touched slots are zeroed after), not made anew.
        thread_local! {
            static SCRATCH: std::cell::RefCell<(Vec<f64>, Vec<u16>)> =
                std::cell::RefCell::default();
        }
        let (mut scores, mut said) = SCRATCH.with_borrow_mut(std::mem::take);
        scores.resize(self.docs.len(), 0.0);
        said.resize(self.docs.len(), 0);
        let mut touched: Vec<u32> = Vec::new();
        for (n_term, &(term, weight)) in weighted.iter().enumerate() {
            let word = n_term < words.len();
            let list = &self.postings[term as usize];
            if list.is_empty() {
                continue;
            }
            let df = list.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln() * weight;
            for posting in list {
                let i = posting.doc as usize;
                let tf = if one_bag {
                    f64::from(posting.count)
                } else {
                    fields.weigh(
                        f64::from(posting.count),
                        f64::from(posting.in_name),
                        f64::from(posting.in_parameters),
                    )
                };
                let dl = self.weighted_lengths[i];
                if scores[i] == 0.0 {
                    touched.push(posting.doc);
                }
                if word {
                    said[i] = said[i].saturating_add(posting.in_name);
                }
                scores[i] += idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / average));
            }
        }
        // A tool whose name the query says in full is a better answer than one that only
        // shares its words elsewhere: add the part of its name's terms the query has.
        if name_coverage > 0.0 {
            for &slot in &touched {
                let i = slot as usize;
                let length = self.name_lengths[i];
                if length > 0 {
                    scores[i] += name_coverage * f64::from(said[i]) / f64::from(length);
                }
            }
        }

        let ranked = touched.iter().map(|&s| (scores[s as usize], s)).collect();
        for &slot in &touched {
            scores[slot as usize] = 0.0;
            said[slot as usize] = 0;
        }
        SCRATCH.with_borrow_mut(|scratch| *scratch = (scores, said));
        ranked
    }

    /// The whole query's ranking and each need's, fused by reciprocal rank (`1 / (60 + rank)`
    /// summed over the rankings a tool is in, the top 50 of each): a tool that answers one
    /// need well is not pushed out of the top by tools that answer the other need.
    fn fused(&self, query: &str, parts: &[&str]) -> Vec<(f64, u32)> {
        let mut fused: FxHashMap<u32, f64> = FxHashMap::default();
        for text in std::iter::once(query).chain(parts.iter().copied()) {
            let mut ranked = self.scored(text);
            for (rank, &(_, slot)) in self.best_first(&mut ranked, 50).iter().enumerate() {
                *fused.entry(slot).or_default() += 1.0 / (60.0 + rank as f64 + 1.0);
            }
        }
        fused
            .into_iter()
            .map(|(slot, score)| (score, slot))
            .collect()
    }

    /// BM25's ranking mixed with the ranking by meaning: the top [`FUSION_DEPTH`] of each
    /// scaled to 0..1, the second's share [`SearchSettings::semantic_weight`].
    #[cfg(feature = "semantic")]
    fn with_meaning(
        &self,
        query: &str,
        mut lexical: Vec<(f64, u32)>,
        semantic: &Semantic,
    ) -> Vec<(f64, u32)> {
        let q = semantic.model.embed(query);
        let mut by_meaning: Vec<(f64, u32)> = Vec::with_capacity(self.live as usize);
        for slot in 0..semantic.scales.len() {
            if self.docs[slot].is_none() {
                continue;
            }
            let cosine = semantic.dot(slot, &q);
            if cosine > 0.0 {
                by_meaning.push((f64::from(cosine), slot as u32));
            }
        }
        // Each ranking's top scores scaled to 0..1 — its best is 1, its 50th 0, or nothing 0
        // when fewer matched (so that one tool BM25 alone found still counts in full) — then
        // mixed: (1 - w)·BM25 + w·meaning; a tool in one top only has 0 from the other.
        let weight = self.settings.semantic_weight.min(1.0);
        let mut fused: FxHashMap<u32, f64> = FxHashMap::default();
        for (ranked, share) in [(&mut lexical, 1.0 - weight), (&mut by_meaning, weight)] {
            let top = self.best_first(ranked, FUSION_DEPTH);
            let (Some(&(best, _)), Some(&(last, _))) = (top.first(), top.last()) else {
                continue;
            };
            let worst = if top.len() == FUSION_DEPTH { last } else { 0.0 };
            let span = if best > worst { best - worst } else { 1.0 };
            for &(score, slot) in top {
                *fused.entry(slot).or_default() += share * (score - worst) / span;
            }
        }
        fused
            .into_iter()
            .map(|(slot, score)| (score, slot))
            .collect()
    }

    /// The `n` best of `ranked`, best first ([`order`](Self::order)).
    ///
    /// Chosen by score alone first (a number comparison, where the order looks at names), then
    /// those and every other tool scored the same as the last of them sorted in full: the same
    /// `n` as a selection in full order, for a fraction of its name comparisons.
    fn best_first<'r>(&self, ranked: &'r mut [(f64, u32)], n: usize) -> &'r [(f64, u32)] {
        let top = ranked.len().min(n);
        if top == 0 {
            return &ranked[..0];
        }
        let mut end = ranked.len();
        if top < ranked.len() {
            ranked.select_nth_unstable_by(top - 1, |a, b| b.0.total_cmp(&a.0));
            // Before `top`: scores at least the cut's; after: at most. Bring the tools after
            // that tie with the cut forward, to be ordered by name with the rest.
            let cut = ranked[top - 1].0;
            end = top;
            for i in top..ranked.len() {
                if ranked[i].0.total_cmp(&cut).is_eq() {
                    ranked.swap(end, i);
                    end += 1;
                }
            }
        }
        ranked[..end].sort_unstable_by(|a, b| self.order(a, b));
        &ranked[..top]
    }

    /// Best first: by score, then by name, then by the order tools were added.
    fn order(&self, a: &(f64, u32), b: &(f64, u32)) -> std::cmp::Ordering {
        let doc = |slot: u32| self.docs[slot as usize].as_ref();
        b.0.total_cmp(&a.0)
            .then_with(|| {
                let name = |slot| doc(slot).map(|d| d.name.as_str());
                name(a.1).cmp(&name(b.1))
            })
            .then_with(|| a.1.cmp(&b.1))
    }

    /// The `limit` best of `ranked` that `keep` accepts, one per name when set.
    fn select(
        &self,
        mut ranked: Vec<(f64, u32)>,
        limit: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<SearchHit> {
        let one_per_name = self.settings.one_per_name;
        let doc = |slot: u32| self.docs[slot as usize].as_ref();
        // Rank a few more than `limit` (filtered and one per name, some drop out), and more
        // only if too few are left.
        let mut wanted = limit.saturating_mul(4);
        let all = ranked.len();
        loop {
            let best = self.best_first(&mut ranked, wanted);
            let top = best.len();
            let mut hits = Vec::with_capacity(limit);
            let mut names: FxHashSet<&str> = FxHashSet::default();
            for &(score, slot) in best {
                let Some(d) = doc(slot) else { continue };
                if (one_per_name && !names.insert(d.name.as_str())) || !keep(&d.key) {
                    continue;
                }
                hits.push(SearchHit {
                    name: d.name.clone(),
                    key: d.key.clone(),
                    summary: d.summary.clone(),
                    score,
                });
                if hits.len() == limit {
                    break;
                }
            }
            if hits.len() == limit || top == all {
                return hits;
            }
            wanted = wanted.saturating_mul(4);
        }
    }
}

/// How many of each ranking the mix of BM25 and meaning reads.
#[cfg(feature = "semantic")]
const FUSION_DEPTH: usize = 50;

/// The needs of a query that asks for several things: its parts between the words and signs
/// that join requests ("then", "and then", "and also", "also", "as well as", ";", a new line
/// or sentence), when there are at least two parts of two words or more. `None` for one need.
fn needs(query: &str) -> Option<Vec<&str>> {
    const JOINS: [&str; 8] = [
        ";",
        "\n",
        ". ",
        " and then ",
        " then ",
        " and also ",
        " also ",
        " as well as ",
    ];
    let mut parts: Vec<&str> = vec![query];
    for join in JOINS {
        let mut cut = Vec::with_capacity(parts.len());
        for part in parts {
            cut.extend(split_ignoring_case(part, join));
        }
        parts = cut;
    }
    let parts: Vec<&str> = parts
        .into_iter()
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c == ',' || c == '.'))
        .filter(|p| p.split_whitespace().count() >= 2)
        .collect();
    (parts.len() >= 2).then_some(parts)
}

/// `text` cut at every ASCII-case-insensitive occurrence of `separator`.
fn split_ignoring_case<'t>(text: &'t str, separator: &str) -> Vec<&'t str> {
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut start = 0;
    while let Some(at) = lower[start..].find(separator) {
        out.push(&text[start..start + at]);
        start += at + separator.len();
    }
    out.push(&text[start..]);
    out
}

/// The texts of a parameters schema: for each property (nested objects and array items
/// included, to a depth of 8) its name, its description and its `enum` values. In the order
/// the schema writes them (the parameters are a bag of terms); each property's fields are read
/// in one pass, not looked up one by one.
fn walk(schema: &Value, out: &mut dyn FnMut(&str), depth: usize) {
    if depth > 8 {
        return;
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        out(key);
        let Some(fields) = property.as_object() else {
            continue;
        };
        for (field, value) in fields {
            match (field.as_str(), value) {
                ("description", Value::String(doc)) => out(doc),
                ("enum", Value::Array(values)) => {
                    for value in values {
                        match value {
                            Value::String(s) => out(s),
                            other => out(&other.to_string()),
                        }
                    }
                }
                ("items", Value::Object(_)) => walk(value, out, depth + 1),
                _ => {}
            }
        }
        walk(property, out, depth + 1);
    }
}

/// The first sentence of a description, at most 160 characters.
fn summary(description: &str) -> String {
    let line = description.trim().lines().next().unwrap_or("").trim();
    let end = line
        .char_indices()
        .find(|&(i, c)| c == '.' && line[i + 1..].starts_with(' '))
        .map_or(line.len(), |(i, _)| i + 1);
    let sentence = &line[..end];
    if sentence.chars().count() <= 160 {
        return sentence.to_string();
    }
    let mut cut: String = sentence.chars().take(159).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str, params: Value) -> ToolDefinition {
        ToolDefinition::new(name, description, params)
    }

    fn corpus() -> ToolIndex {
        ToolIndex::from_definitions(&[
            tool(
                "get_weather",
                "Current weather for a city.",
                json!({"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}}),
            ),
            tool(
                "getStockPrice",
                "The latest price of a stock.",
                json!({"type": "object", "properties": {"ticker": {"type": "string", "description": "Ticker symbol, e.g. AAPL"}}}),
            ),
            tool(
                "send_email",
                "Send an email to someone.",
                json!({"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}}),
            ),
            tool(
                "forecast",
                "Weather forecasts for the coming days.",
                json!({"type": "object", "properties": {"location": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}}}),
            ),
        ])
    }

    #[test]
    fn each_written_word_makes_the_term_the_analyzer_makes() {
        let mut index = ToolIndex::new();
        let analyzer = text::Analyzer::new(index.settings.stemming);
        let mut buffer = String::new();
        let mut id = |word: &str| index.word_id(analyzer, word, &mut buffer);
        // Remembered words give what a fresh analysis gives, in any case.
        let cities = id("Cities");
        assert_eq!(id("cities"), cities);
        assert_eq!(id("Cities"), cities);
        assert_eq!(id("city"), cities, "the same stem");
        assert_eq!(id("The"), None, "a common word is no term");
        assert_eq!(id("The"), None, "… remembered as none");
        // Words of 16 bytes and more: kept apart from their prefixes and from each other.
        let sixteen = id("internationalize");
        let seventeen = id("internationalizes");
        assert!(sixteen.is_some() && seventeen.is_some());
        assert_ne!(id("internationalis"), sixteen);
        assert_eq!(id("Internationalization"), id("internationalization"));
        assert_ne!(id("internationalization"), id("internationalizationx"));
        // Non-ASCII words are keyed by their bytes too.
        assert_eq!(id("información"), id("información"));
        assert_ne!(id("información"), id("informacion"));
        // The vocabulary holds each term once.
        let terms = index.vocabulary.len();
        index.insert(&tool(
            "list_cities",
            "Cities and internationalization.",
            json!({}),
        ));
        assert_eq!(index.vocabulary.len(), terms + 1, "only `list` is new");
    }

    #[test]
    fn ranks_by_name_description_and_parameters() {
        let index = corpus();
        let names =
            |q: &str| -> Vec<String> { index.search(q, 3).into_iter().map(|h| h.name).collect() };
        assert_eq!(names("weather in a city")[0], "get_weather");
        assert_eq!(names("stock price")[0], "getStockPrice");
        assert_eq!(names("AAPL ticker")[0], "getStockPrice");
        assert_eq!(names("forecasts for the next days")[0], "forecast");
        assert_eq!(names("lat lon")[0], "forecast");
        assert!(names("zebra").is_empty());
    }

    #[test]
    fn ties_break_by_name_and_limits_hold() {
        let index = ToolIndex::from_definitions(&[
            tool("b_tool", "same words", json!({})),
            tool("a_tool", "same words", json!({})),
            tool("c_tool", "same words", json!({})),
        ]);
        let hits = index.search("same words", 2);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].name, "a_tool");
        assert_eq!(hits[1].name, "b_tool");
        assert!(index.search("same", 0).is_empty());
    }

    #[test]
    fn the_best_among_many_ties_are_the_first_by_name() {
        // 40 tools scored the same: the cut of the selection falls among ties.
        let names: Vec<String> = (0..40)
            .map(|i| format!("tool_{:02}", (i * 17) % 40))
            .collect();
        let definitions: Vec<ToolDefinition> = names
            .iter()
            .map(|n| tool(n, "same words", json!({})))
            .collect();
        let index = ToolIndex::from_definitions(&definitions);
        let hits: Vec<String> = index
            .search("same words", 3)
            .into_iter()
            .map(|h| h.name)
            .collect();
        assert_eq!(hits, ["tool_00", "tool_01", "tool_02"]);
        // The `n` best are those of a full sort, wherever the cut falls among ties.
        let ranked: Vec<(f64, u32)> = (0..40u32).map(|s| (f64::from(s % 4), s)).collect();
        let mut full = ranked.clone();
        full.sort_by(|a, b| index.order(a, b));
        for n in [1, 5, 9, 10, 11, 39, 40, 50] {
            let mut some = ranked.clone();
            assert_eq!(index.best_first(&mut some, n), &full[..n.min(40)], "{n}");
        }
    }

    #[test]
    fn updates_are_incremental_and_exact() {
        let mut index = corpus();
        let fresh = ToolIndex::from_definitions(&[
            tool(
                "get_weather",
                "Current weather for a city.",
                json!({"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}}),
            ),
            tool(
                "forecast",
                "Weather forecasts for the coming days.",
                json!({"type": "object", "properties": {"location": {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}}}),
            ),
        ]);
        assert!(index.remove("send_email"));
        assert!(index.remove("getStockPrice"));
        assert!(!index.remove("getStockPrice"));
        assert_eq!(index.len(), 2);
        // Same statistics as an index built with the remaining tools only: same scores.
        assert_eq!(index.search("weather", 5), fresh.search("weather", 5));
        // A replaced tool is found by its new text only.
        index.insert(&tool("forecast", "Tide tables.", json!({})));
        assert_eq!(index.len(), 2);
        assert_eq!(index.search("tide", 5)[0].name, "forecast");
        assert!(index.search("lat", 5).is_empty());
        // Freed slots are reused.
        index.insert(&tool("new_one", "Brand new.", json!({})));
        assert_eq!(index.search("brand", 1)[0].name, "new_one");
    }

    #[test]
    fn words_written_joined_or_apart_meet_when_asked() {
        let tools = [
            tool("datagov__search", "Find datasets.", json!({})),
            tool("portal", "The data portal.", json!({})),
            tool("repos", "Repositories on GitHub.", json!({})),
            tool("events", "Events of a hub.", json!({})),
        ];
        let first = |settings: SearchSettings, q: &str| {
            let mut index = ToolIndex::with_settings(settings);
            tools.iter().for_each(|t| index.insert(t));
            index.search(q, 1).pop().map(|h| h.name)
        };
        let joined = SearchSettings::default().with_join_words(true);
        // "data gov" is the catalog's `datagov`; "github" its "GitHub" (`git`, `hub`).
        assert_eq!(
            first(joined, "data gov").as_deref(),
            Some("datagov__search")
        );
        let apart = SearchSettings::default().with_join_words(false);
        assert_eq!(first(apart, "data gov").as_deref(), Some("portal"));
        assert_eq!(first(joined, "github").as_deref(), Some("repos"));
        assert_eq!(first(apart, "github"), None);
    }

    #[test]
    fn repeated_query_words_fields_and_snowball_change_the_ranking_as_set() {
        let ranked = |settings: SearchSettings, tools: &[ToolDefinition], q: &str| {
            let mut index = ToolIndex::with_settings(settings.plain());
            tools.iter().for_each(|t| index.insert(t));
            let hits = index.search(q, 2);
            hits.into_iter().map(|h| h.name).collect::<Vec<_>>()
        };
        // One bag of words, the light stemmer, distinct query terms.
        let base = SearchSettings::default()
            .with_stemming(Stemming::Light)
            .with_fields(FieldWeights::default())
            .with_join_words(false)
            .with_query_k3(0.0);
        // Each tool has one of the query's words (twice): a tie, broken by name, unless the
        // word said twice counts more.
        let twice = [
            tool("chart_tool", "Chart data.", json!({})),
            tool("picture_tool", "Picture data.", json!({})),
        ];
        let q = "picture picture chart";
        assert_eq!(ranked(base, &twice, q), ["chart_tool", "picture_tool"]);
        let k3 = base.with_query_k3(1.2);
        assert_eq!(ranked(k3, &twice, q), ["picture_tool", "chart_tool"]);
        // The same word in one tool's name and another's description: a tie in one bag, the
        // name first when names weigh more.
        let fields = [
            tool("aa_draw", "Chart.", json!({})),
            tool("zz_chart", "Draw.", json!({})),
        ];
        assert_eq!(ranked(base, &fields, "chart"), ["aa_draw", "zz_chart"]);
        let name_heavy = base.with_fields(FieldWeights::new(3.0, 1.0, 1.0));
        assert_eq!(
            ranked(name_heavy, &fields, "chart"),
            ["zz_chart", "aa_draw"]
        );
        // Snowball stems what the light stemmer leaves: "recommendations" meets "recommend".
        let films = [tool("suggest", "Recommend a film.", json!({}))];
        let snowball = base.with_stemming(Stemming::Snowball);
        assert_eq!(ranked(snowball, &films, "recommendations"), ["suggest"]);
        assert!(ranked(base, &films, "recommendations").is_empty());
    }

    #[test]
    fn a_query_of_several_needs_keeps_each_need_near_the_top() {
        assert_eq!(
            needs("Find the weather in Paris, then email it to Bob."),
            Some(vec!["Find the weather in Paris", "email it to Bob"])
        );
        assert_eq!(needs("read and write files"), None);
        assert_eq!(needs("weather; then"), None);
        let mut tools: Vec<ToolDefinition> = (0..4)
            .map(|i| {
                let name = format!("weather_{i}");
                tool(&name, "Weather forecast report for a city.", json!({}))
            })
            .collect();
        tools.push(tool("send_email", "Send an email message.", json!({})));
        let top = |settings: SearchSettings| {
            let mut index = ToolIndex::with_settings(settings);
            tools.iter().for_each(|t| index.insert(t));
            let q = "weather forecast report for the city, then send an email";
            let hits = index.search(q, 3);
            hits.into_iter().map(|h| h.name).collect::<Vec<_>>()
        };
        let split = top(SearchSettings::default().with_split_needs(true));
        assert!(split.contains(&"send_email".to_string()), "{split:?}");
        assert!(
            split[..2].iter().any(|n| n.starts_with("weather")),
            "{split:?}"
        );
    }

    #[test]
    fn filters_and_summaries() {
        let index = corpus();
        let hits = index.search_where("weather", 5, |name| name != "get_weather");
        assert_eq!(hits[0].name, "forecast");
        assert_eq!(summary("First one. Second one."), "First one.");
        assert_eq!(summary("v1.2 is here\nmore"), "v1.2 is here");
        assert_eq!(summary(&"x".repeat(300)).chars().count(), 160);
    }

    /// A toy model: six words on three axes (writing, weather, mail); a tool is found by
    /// meaning with none of the query's words, a removed tool is never found, and a reused slot
    /// has its new tool's vector.
    #[cfg(feature = "semantic")]
    #[test]
    fn ranks_by_meaning_too_with_embeddings() {
        use std::sync::Arc;

        use crate::search::Embeddings;

        let tokenizer = json!({
            "version": "1.0",
            "model": {"type": "WordLevel", "unk_token": "[UNK]", "vocab": {
                "[UNK]": 0, "save": 1, "write": 2, "file": 3, "forecast": 4, "email": 5,
                "note": 6
            }},
            "normalizer": {"type": "Lowercase"},
            "pre_tokenizer": {"type": "Whitespace"}
        });
        let rows: [[f32; 3]; 7] = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.1],
            [1.0, 0.1, 0.0],
            [0.9, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.8, 0.0, 0.3],
        ];
        let bytes: Vec<u8> = rows
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let table =
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![7, 3], &bytes)
                .expect("a table");
        let weights = safetensors::serialize([("embeddings", table)], None).expect("serialized");
        let model = Embeddings::from_bytes(tokenizer.to_string().as_bytes(), &weights, true)
            .expect("the toy model loads");
        assert_eq!(model.dimensions(), 3);
        let model = Arc::new(model);
        let tools = [
            tool("write_file", "Write to a file.", json!({})),
            tool("get_forecast", "The forecast.", json!({})),
            tool("send_email", "Send an email.", json!({})),
        ];
        let settings = SearchSettings::default();
        let mut lexical = ToolIndex::with_settings(settings);
        let mut semantic = ToolIndex::with_embeddings(settings, model.clone());
        for t in &tools {
            lexical.insert(t);
            semantic.insert(t);
        }
        assert!(lexical.search("save my note", 3).is_empty());
        let hits = semantic.search("save my note", 3);
        assert_eq!(hits[0].name, "write_file", "{hits:?}");
        // Still BM25 first where words match, even when it found one tool alone and the
        // meaning leans elsewhere.
        assert_eq!(semantic.search("email", 1)[0].name, "send_email");
        assert_eq!(lexical.search("email save note", 3).len(), 1);
        assert_eq!(semantic.search("email save note", 1)[0].name, "send_email");
        // Removed: never found; its slot reused by a tool of another meaning.
        assert!(semantic.remove("write_file"));
        assert!(
            semantic
                .search("save my note", 3)
                .iter()
                .all(|h| h.name != "write_file")
        );
        semantic.insert(&tool("mail_out", "Email it.", json!({})));
        let hits = semantic.search("save my note", 3);
        assert!(hits.iter().all(|h| h.name != "write_file"), "{hits:?}");
        // Weight 0: BM25 alone.
        let mut off = ToolIndex::with_embeddings(settings.with_semantic_weight(0.0), model);
        tools.iter().for_each(|t| off.insert(t));
        assert!(off.search("save my note", 3).is_empty());
    }
}
