//! HTTP chat model providers (`OpenAiChat`, `OpenAiResponses`, `AnthropicMessages`) against
//! local servers that play the provider over real HTTP on 127.0.0.1: request bodies, response
//! parsing, streaming, errors and retries.

mod anthropic;
mod catalogs;
mod errors;
mod hosted_code;
mod openai;
mod responses;
mod support;
mod text_calls;
