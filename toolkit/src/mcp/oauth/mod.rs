//! [`McpOAuth`]: OAuth 2.1 for the MCP HTTP client, as the 2025-11-25 authorization spec says,
//! on rmcp's implementation (protected-resource and authorization-server metadata discovery,
//! PKCE, client ID metadata documents, dynamic or pre-registration, scope selection from the
//! challenge, token refresh). The browser step is the application's: a callback gets the
//! authorization URL and returns the URL the browser was sent back to.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationRequest, AuthorizationSession, ClientCredentialsConfig,
    CredentialStore, InMemoryCredentialStore, OAuthHttpClient, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest,
};

use crate::endpoint::Secret;

mod grants;

use grants::{CrossApp, SigningKey};

/// The browser step: given the authorization URL, send the user there and return the URL the
/// authorization server redirected back to (the redirect URI with `code` and `state`).
type Authorize = Arc<dyn Fn(String) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// OAuth 2.1 for a remote MCP server that requires it
/// ([`McpClientOptions::oauth`](super::McpClientOptions::oauth)).
///
/// When the server answers HTTP 401 with a `WWW-Authenticate` challenge, the client discovers
/// the server's authorization server (protected-resource metadata, then the authorization
/// server's metadata, each at the places the spec lists), registers — with a client ID metadata
/// document when the server supports one and you set its URL, with your pre-registered client,
/// or by dynamic registration — and sends the user to the authorization URL through your
/// callback, with PKCE (S256) and the scopes of the challenge (else those the server lists).
/// The code your callback returns is exchanged for tokens, which the credential store keeps (in
/// memory unless you set one) and which are refreshed when they expire; a token that is
/// refused later, or lacks a scope the server asks for (HTTP 403), starts the flow again with
/// the new challenge on the next request. Tokens are never logged.
///
/// ```no_run
/// use agent_toolkit::mcp::{McpClientOptions, McpOAuth};
///
/// let oauth = McpOAuth::new("http://localhost:8765/callback", |url: String| async move {
///     // Open `url` in the user's browser, wait for the redirect to the callback address,
///     // and return the full URL it was called with.
///     Ok::<_, String>(format!("http://localhost:8765/callback?code=…&state=…"))
/// })
/// .client_name("my agent");
/// let options = McpClientOptions::new().oauth(oauth);
/// ```
#[derive(Clone)]
#[must_use = "pass it to McpClientOptions::oauth"]
pub struct McpOAuth {
    pub(crate) redirect_uri: String,
    pub(crate) authorize: Authorize,
    /// The client-credentials grant (no user, no browser) instead of the authorization code.
    pub(crate) client_credentials: bool,
    /// For that grant, the client authenticates with a JWT signed by this key (`private_key_jwt`)
    /// instead of a secret.
    pub(crate) signing_key: Option<SigningKey>,
    /// Enterprise-managed authorization: a token got with the user's ID token from an identity
    /// provider, instead of a browser step.
    pub(crate) cross_app: Option<CrossApp>,
    pub(crate) client_name: Option<String>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<Secret>,
    pub(crate) scopes: Vec<String>,
    pub(crate) store: Arc<dyn CredentialStore>,
}

impl McpOAuth {
    /// OAuth with `redirect_uri` (where the authorization server sends the browser back) and
    /// the browser step `authorize`.
    pub fn new<F, Fut>(redirect_uri: impl Into<String>, authorize: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        McpOAuth {
            redirect_uri: redirect_uri.into(),
            authorize: Arc::new(move |url| Box::pin(authorize(url))),
            client_credentials: false,
            signing_key: None,
            cross_app: None,
            client_name: None,
            metadata_url: None,
            client_id: None,
            client_secret: None,
            scopes: Vec::new(),
            store: Arc::new(InMemoryCredentialStore::new()),
        }
    }

    /// OAuth for a client acting on its own behalf, with no user: the client-credentials grant
    /// (SEP-1046) with a client registered beforehand and its secret, sent the way the
    /// authorization server's metadata says. Nobody is sent to a browser.
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        let mut oauth = McpOAuth::new("", |_url: String| async {
            Err::<String, _>("the client-credentials grant has no browser step".to_owned())
        })
        .preregistered(client_id, Some(secret.into()));
        oauth.client_credentials = true;
        oauth
    }

    /// OAuth for a client acting on its own behalf, with no user, that proves who it is with a
    /// JWT it signs with its private key instead of a secret: the client-credentials grant with
    /// `private_key_jwt` client authentication (RFC 7523; SEP-1046). `private_key_pem` is the
    /// key whose public half is registered with the authorization server (PEM: PKCS#8, or
    /// PKCS#1 for RSA), `algorithm` one of `RS256`, `RS384`, `RS512`, `PS256`, `PS384`,
    /// `PS512`, `ES256`, `ES384`. Each token request carries a fresh assertion (`iss` and `sub`
    /// the client id, `aud` the authorization server's issuer, valid for five minutes, a new
    /// `jti`). A key or algorithm that cannot sign fails the first connection with the reason;
    /// the key is never logged.
    pub fn client_credentials_jwt(
        client_id: impl Into<String>,
        private_key_pem: impl Into<String>,
        algorithm: &str,
    ) -> Self {
        let mut oauth = McpOAuth::client_credentials(client_id, String::new());
        oauth.client_secret = None;
        oauth.signing_key = Some(SigningKey::new(private_key_pem.into(), algorithm));
        oauth
    }

    /// Enterprise-managed authorization (cross-app access, SEP-990): the user signed in to
    /// their organization's identity provider, and the MCP server's authorization server trusts
    /// it. No browser step: `id_token` returns the user's ID token from your single sign-on
    /// (called each time a token is needed); the client exchanges it at the identity provider's
    /// token endpoint (`idp_token_endpoint`, RFC 8693) for an identity assertion grant naming
    /// this authorization server and MCP server, then that grant at the authorization server
    /// (a JWT bearer grant, RFC 7523, the client authenticated by `client_id` and
    /// `client_secret`) for an access token. Both requests go over TLS (or to this host).
    pub fn cross_app_access<F, Fut>(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        idp_token_endpoint: impl Into<String>,
        id_token: F,
    ) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        let mut oauth = McpOAuth::new("", |_url: String| async {
            Err::<String, _>("cross-app access has no browser step".to_owned())
        })
        .preregistered(client_id, Some(client_secret.into()));
        oauth.cross_app = Some(CrossApp {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: None,
            id_token: Arc::new(move || Box::pin(id_token())),
        });
        oauth
    }

    /// With [`cross_app_access`](Self::cross_app_access): this client's id at the identity
    /// provider, sent with the token exchange.
    pub fn idp_client_id(mut self, id: impl Into<String>) -> Self {
        if let Some(cross) = &mut self.cross_app {
            cross.idp_client_id = Some(id.into());
        }
        self
    }

    /// The client's name, for dynamic registration.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = Some(name.into());
        self
    }

    /// The HTTPS URL of this client's metadata document, used as its client ID where the
    /// authorization server supports client ID metadata documents (else dynamic registration).
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// A client registered with the authorization server beforehand (its secret, if it is a
    /// confidential client; sent the way the server's metadata says: HTTP Basic or in the body).
    pub fn preregistered(mut self, client_id: impl Into<String>, secret: Option<String>) -> Self {
        self.client_id = Some(client_id.into());
        self.client_secret = secret.map(Secret);
        self
    }

    /// The scopes to ask for (default: those of the server's challenge, else those its
    /// metadata lists).
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Where tokens are kept (default: in memory, for the client's lifetime). Implement
    /// [`CredentialStore`](super::types::CredentialStore) to keep them across runs.
    pub fn credential_store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// Run the flow against the server at `url` after its challenge: an authorized manager,
    /// or why not.
    pub(super) async fn authorize(
        &self,
        url: &str,
        http: OAuthClients,
        challenge: &str,
    ) -> Result<AuthorizationManager, String> {
        let token_http = http.stop.clone();
        let client = Arc::new(OAuthHttp {
            follow: http.follow,
            stop: http.stop,
        });
        let mut manager = AuthorizationManager::new_with_oauth_http_client(url, client)
            .await
            .map_err(|e| format!("could not start OAuth for {url}: {e}"))?;
        manager.set_credential_store(SharedStore(self.store.clone()));
        let metadata = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
            .map_err(|e| format!("could not discover the authorization server: {e}"))?;
        // Grants made here: the token goes into the store, where the manager reads it.
        if let (true, Some(key)) = (self.client_credentials, &self.signing_key) {
            grants::signed_client_credentials(self, key, &metadata.metadata, url, &token_http)
                .await?;
            manager.set_metadata(metadata.metadata);
            return Ok(manager);
        }
        if let Some(cross) = &self.cross_app {
            grants::cross_app_access(self, cross, &metadata.metadata, url, &token_http).await?;
            manager.set_metadata(metadata.metadata);
            return Ok(manager);
        }
        manager.set_metadata(metadata.metadata);
        if self.client_credentials {
            return self.client_credentials_grant(manager, url).await;
        }
        let mut request = AuthorizationRequest::new(self.redirect_uri.clone())
            .with_challenge(challenge.to_owned());
        if !self.scopes.is_empty() {
            request = request.with_scopes(self.scopes.iter().cloned());
        }
        if let Some(name) = &self.client_name {
            request = request.with_client_name(name.clone());
        }
        if let Some(url) = &self.metadata_url {
            request = request.with_client_metadata_url(url.clone());
        }
        if let Some(id) = &self.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.client_secret {
                request = request.with_client_secret(secret.0.clone());
            }
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| format!("could not register with the authorization server: {e}"))?;
        let callback = (self.authorize)(session.get_authorization_url().to_owned())
            .await
            .map_err(|e| format!("the authorization step failed: {e}"))?;
        session
            .handle_callback_url(&callback)
            .await
            .map_err(|e| format!("the authorization server did not issue a token: {e}"))?;
        Ok(session.auth_manager)
    }
}

impl McpOAuth {
    /// The client-credentials grant with the discovered metadata: a token for the client
    /// itself, for the MCP server at `url` (the `resource` the spec requires).
    async fn client_credentials_grant(
        &self,
        mut manager: AuthorizationManager,
        url: &str,
    ) -> Result<AuthorizationManager, String> {
        let (Some(client_id), Some(secret)) = (&self.client_id, &self.client_secret) else {
            return Err("the client-credentials grant needs a client id and secret".into());
        };
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: client_id.clone(),
            client_secret: secret.0.clone(),
            scopes: self.scopes.clone(),
            resource: Some(url.to_owned()),
        };
        manager
            .validate_client_credentials_metadata(&config)
            .map_err(|e| format!("the authorization server does not offer this grant: {e}"))?;
        manager
            .configure_client_credentials(&config)
            .map_err(|e| format!("could not configure the client-credentials grant: {e}"))?;
        manager
            .exchange_client_credentials(&config)
            .await
            .map_err(|e| format!("the authorization server did not issue a token: {e}"))?;
        Ok(manager)
    }
}

impl fmt::Debug for McpOAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpOAuth")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_credentials", &self.client_credentials)
            .field(
                "signing_algorithm",
                &self.signing_key.as_ref().map(SigningKey::algorithm),
            )
            .field(
                "cross_app_idp",
                &self.cross_app.as_ref().map(|c| &c.idp_token_endpoint),
            )
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.metadata_url)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// The HTTP clients of the OAuth requests (metadata discovery, registration, tokens): the
/// library's own, with its trusted roots and crypto provider, one following redirects and one
/// not, as each request asks.
pub(super) struct OAuthClients {
    pub(super) follow: reqwest::Client,
    pub(super) stop: reqwest::Client,
}

struct OAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
}

/// The most bytes of an OAuth response read (metadata and token answers are small).
const MAX_OAUTH_BODY: usize = 1 << 20;

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let mut outgoing = reqwest::Request::try_from(request.request)?;
            if let Some(timeout) = request.timeout {
                *outgoing.timeout_mut() = Some(timeout);
            }
            let mut response = client.execute(outgoing).await?;
            let mut answer = axum::http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_OAUTH_BODY {
                    return Err(format!(
                        "an OAuth response was longer than {MAX_OAUTH_BODY} bytes"
                    )
                    .into());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(answer.body(body)?)
        })
    }
}

/// The user's store, shared by every authorization of one client.
struct SharedStore(Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(
        &self,
    ) -> Result<Option<rmcp::transport::auth::StoredCredentials>, rmcp::transport::auth::AuthError>
    {
        self.0.load().await
    }

    async fn save(
        &self,
        credentials: rmcp::transport::auth::StoredCredentials,
    ) -> Result<(), rmcp::transport::auth::AuthError> {
        self.0.save(credentials).await
    }

    async fn clear(&self) -> Result<(), rmcp::transport::auth::AuthError> {
        self.0.clear().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client secret never shows in `Debug` (nor, through it, in logs).
    #[test]
    fn debug_keeps_the_secret_out() {
        let oauth = McpOAuth::new("http://localhost/cb", |_url: String| async {
            Err::<String, _>("no browser".to_owned())
        })
        .preregistered("client-1", Some("s3cret".into()))
        .scopes(["read"]);
        let shown = format!("{oauth:?}");
        assert!(
            shown.contains("client-1") && shown.contains("read"),
            "{shown}"
        );
        assert!(!shown.contains("s3cret"), "{shown}");
        let jwt =
            McpOAuth::client_credentials_jwt("client-2", "-----BEGIN PRIVATE KEY-----x", "ES256");
        let shown = format!("{jwt:?}");
        assert!(
            shown.contains("ES256") && !shown.contains("BEGIN"),
            "{shown}"
        );
    }
}
