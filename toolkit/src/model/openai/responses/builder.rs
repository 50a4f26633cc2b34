//! [`OpenAiResponsesBuilder`]: the settings of an [`OpenAiResponses`].

use super::{OpenAiResponses, ResponsesToolSearch};
use crate::model::http::{self, Endpoint, HttpSettings};
use crate::model::openai::DEFAULT_BASE_URL;
use crate::model::{ModelError, ToolFeatures};
// Named in the documentation.
#[allow(unused_imports)]
use crate::{
    dialect::Dialect,
    model::{ChatModel, ChatRequest},
};

/// Settings of an [`OpenAiResponses`]; start with [`OpenAiResponses::builder`].
#[derive(Clone, Debug, Default)]
pub struct OpenAiResponsesBuilder {
    http: HttpSettings,
    model: Option<String>,
    strict: bool,
    text_calls: Option<bool>,
    tool_search: ResponsesToolSearch,
    reasoning_items: Option<bool>,
    features: Option<ToolFeatures>,
}

impl OpenAiResponsesBuilder {
    http::provider_setters! {
        /// The API key, sent as `Authorization: Bearer <key>` (a
        /// [`bearer_token`](Self::bearer_token) given too replaces it). Optional: local servers
        /// usually need none.
        api_key;

        /// Send tools with `strict: true` ([`Dialect::OpenAiStrict`]) so that OpenAI guarantees
        /// arguments matching the schema; a tool whose schema strict mode cannot express is sent
        /// with `strict: false`. The default is `false` ([`Dialect::OpenAi`]), sent as such:
        /// Responses reads a missing `strict` as "strict where the schema allows", so it is
        /// always sent explicitly.
        strict;

        /// Whether tool calls the model writes as text are read as calls (default `true`), and
        /// whether a request whose output the server could not read is asked again for text; the
        /// same setting as [`OpenAiChatBuilder::text_tool_calls`](crate::model::openai::OpenAiChatBuilder::text_tool_calls),
        /// for the compatible servers (llama.cpp, vLLM) that serve small models on this wire.
        text_tool_calls;

        /// Who runs the tool search sent with deferred tools ([`ChatRequest::deferred_tools`]):
        /// OpenAI ([`ResponsesToolSearch::Hosted`], the default) or the caller
        /// ([`ResponsesToolSearch::Client`]).
        tool_search(ResponsesToolSearch);

        /// What [`ChatModel::tool_features`] reports (default: every feature,
        /// [`ToolFeatures::all`]); for a compatible server that has no tool search, no
        /// `allowed_tools`/`additional_tools` or no programmatic tool calling, so that an agent
        /// does without them.
        tool_features;
    }

    http::connection_methods!(
        "The API root, before `/responses` (default `https://api.openai.com/v1`)."
    );
    crate::endpoint::endpoint_methods!(http.endpoint);

    /// Whether to ask for reasoning items with their encrypted content
    /// (`include: ["reasoning.encrypted_content"]`, default `true`), which a reasoning model
    /// needs to keep its reasoning across the turns of a stateless conversation. Turn it off
    /// for a model or a compatible server that rejects the `include`.
    pub fn reasoning_items(mut self, on: bool) -> Self {
        self.reasoning_items = Some(on);
        self
    }

    /// The model. Fails on a missing model name or an invalid URL, key or header.
    pub fn build(self) -> Result<OpenAiResponses, ModelError> {
        let model = http::model_name(self.model)?;
        let headers = crate::model::openai::bearer_headers(&self.http)?;
        Ok(OpenAiResponses {
            endpoint: Endpoint::new(&self.http, DEFAULT_BASE_URL, "/responses", headers)?,
            model,
            dialect: crate::model::openai::dialect(self.strict),
            text_calls: self.text_calls.unwrap_or(true),
            tool_search: self.tool_search,
            reasoning_items: self.reasoning_items.unwrap_or(true),
            features: self.features.unwrap_or_else(ToolFeatures::all),
        })
    }
}
