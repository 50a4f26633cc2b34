//! The token requests the client makes itself, where rmcp's cannot be used: the
//! client-credentials grant authenticated by a signed JWT (`private_key_jwt`, RFC 7523; rmcp's
//! own support makes the authorization manager's futures `!Send`), and enterprise-managed
//! cross-app access (SEP-990: an identity provider's ID token exchanged for an identity
//! assertion grant, RFC 8693, which the authorization server takes as a JWT bearer grant,
//! RFC 7523). The token they get goes into the credential store, where rmcp's manager reads it
//! like any other; when it expires, the server's next challenge runs the grant again.

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::transport::auth::{AuthorizationMetadata, OAuthTokenResponse, StoredCredentials};
use serde_json::Value;

use super::McpOAuth;
use crate::endpoint::Secret;

/// The private key a client signs its JWT assertions with, and the algorithm. Never logged.
#[derive(Clone)]
pub(crate) struct SigningKey {
    pem: Secret,
    algorithm: String,
}

impl SigningKey {
    pub(super) fn new(pem: String, algorithm: &str) -> SigningKey {
        SigningKey {
            pem: Secret(pem),
            algorithm: algorithm.to_owned(),
        }
    }

    /// The algorithm's name, as given.
    pub(super) fn algorithm(&self) -> &str {
        &self.algorithm
    }

    /// A client assertion (RFC 7523) for `client_id` to the authorization server `audience`.
    fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        use jsonwebtoken::{Algorithm, EncodingKey, Header};
        let algorithm: Algorithm = self.algorithm.parse().map_err(|_| {
            format!(
                "`{}` is not a JWT signing algorithm (RS256, RS384, RS512, PS256, PS384, PS512, \
                 ES256, ES384)",
                self.algorithm
            )
        })?;
        let pem = self.pem.0.as_bytes();
        let key = match algorithm {
            Algorithm::ES256 | Algorithm::ES384 => EncodingKey::from_ec_pem(pem).map_err(|e| {
                format!(
                    "{} needs an EC private key in PEM (PKCS#8, `BEGIN PRIVATE KEY`); this one \
                     could not be read as one: {e}",
                    self.algorithm
                )
            })?,
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => EncodingKey::from_rsa_pem(pem).map_err(|e| {
                format!(
                    "{} needs an RSA private key in PEM (`BEGIN PRIVATE KEY` or `BEGIN RSA \
                     PRIVATE KEY`); this one could not be read as one: {e}",
                    self.algorithm
                )
            })?,
            other => {
                return Err(format!(
                    "{other:?} signs with a shared secret, not a private key: use an RSA or EC \
                     algorithm"
                ));
            }
        };
        let now = now_secs().unwrap_or(0);
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + 300,
            "jti": format!("{:032x}", fastrand::u128(..)),
        });
        let mut header = Header::new(algorithm);
        header.typ = Some("JWT".to_owned());
        jsonwebtoken::encode(&header, &claims, &key)
            .map_err(|e| format!("the client assertion could not be signed: {e}"))
    }
}

/// Where the user's ID token comes from (the application's single sign-on), asked each time
/// the grant runs.
pub(super) type IdToken = Arc<dyn Fn() -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// Enterprise-managed authorization: the identity provider and the user's ID token there.
#[derive(Clone)]
pub(crate) struct CrossApp {
    pub(super) idp_token_endpoint: String,
    pub(super) idp_client_id: Option<String>,
    pub(super) id_token: IdToken,
}

/// The client-credentials grant with a signed client assertion, for the MCP server at `url`.
pub(super) async fn signed_client_credentials(
    oauth: &McpOAuth,
    key: &SigningKey,
    metadata: &AuthorizationMetadata,
    url: &str,
    http: &reqwest::Client,
) -> Result<(), String> {
    let client_id = oauth
        .client_id
        .as_deref()
        .ok_or("the client-credentials grant needs a client id")?;
    let issuer = metadata.issuer.as_deref().ok_or(
        "the authorization server's metadata names no issuer, the audience of the client's \
         signed assertion",
    )?;
    secure(&metadata.token_endpoint, "a signed client assertion")?;
    let mut form = vec![
        ("grant_type", "client_credentials".to_owned()),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
        ),
        ("client_assertion", key.assertion(client_id, issuer)?),
        ("resource", url.to_owned()),
    ];
    if !oauth.scopes.is_empty() {
        form.push(("scope", oauth.scopes.join(" ")));
    }
    let token = post(http, &metadata.token_endpoint, &form, None).await?;
    keep(oauth, client_id, token).await
}

/// Cross-app access for the MCP server at `url`: the user's ID token exchanged at the identity
/// provider for an identity assertion grant (ID-JAG) for this authorization server and
/// resource, then that grant exchanged at the authorization server for an access token, the
/// client authenticated with its secret (HTTP Basic).
pub(super) async fn cross_app_access(
    oauth: &McpOAuth,
    cross: &CrossApp,
    metadata: &AuthorizationMetadata,
    url: &str,
    http: &reqwest::Client,
) -> Result<(), String> {
    let (Some(client_id), Some(secret)) = (oauth.client_id.as_deref(), &oauth.client_secret) else {
        return Err("cross-app access needs the client's id and secret".into());
    };
    let issuer = metadata.issuer.as_deref().ok_or(
        "the authorization server's metadata names no issuer, the audience of the identity \
         assertion grant",
    )?;
    secure(&cross.idp_token_endpoint, "the user's ID token")?;
    secure(&metadata.token_endpoint, "an identity assertion grant")?;
    let id_token = (cross.id_token)()
        .await
        .map_err(|e| format!("no ID token from the identity provider's sign-in: {e}"))?;
    let mut exchange = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
        ),
        (
            "requested_token_type",
            "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
        ),
        ("subject_token", id_token),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token".to_owned(),
        ),
        ("audience", issuer.to_owned()),
        ("resource", url.to_owned()),
    ];
    if let Some(idp_client) = &cross.idp_client_id {
        exchange.push(("client_id", idp_client.clone()));
    }
    if !oauth.scopes.is_empty() {
        exchange.push(("scope", oauth.scopes.join(" ")));
    }
    let grant = post_json(
        http,
        &cross.idp_token_endpoint,
        &exchange,
        None,
        "identity provider",
    )
    .await?;
    if grant["issued_token_type"] != "urn:ietf:params:oauth:token-type:id-jag" {
        return Err(format!(
            "the identity provider issued `{}`, not an identity assertion grant (id-jag)",
            grant["issued_token_type"]
                .as_str()
                .unwrap_or("nothing it named")
        ));
    }
    let Some(assertion) = grant["access_token"].as_str() else {
        return Err("the identity provider's answer has no `access_token`".into());
    };
    let mut form = vec![
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
        ),
        ("assertion", assertion.to_owned()),
    ];
    if !oauth.scopes.is_empty() {
        form.push(("scope", oauth.scopes.join(" ")));
    }
    let token = post(
        http,
        &metadata.token_endpoint,
        &form,
        Some((client_id, &secret.0)),
    )
    .await?;
    keep(oauth, client_id, token).await
}

/// Credentials go over TLS, or stay on this host.
fn secure(endpoint: &str, what: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(endpoint)
        .map_err(|e| format!("the token endpoint `{endpoint}` is not a URL: {e}"))?;
    let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    if url.scheme() == "https" || local {
        Ok(())
    } else {
        Err(format!(
            "the token endpoint {url} is not HTTPS: {what} is sent only over TLS (or to this host)"
        ))
    }
}

/// A token request to the authorization server; its token.
async fn post(
    http: &reqwest::Client,
    endpoint: &str,
    form: &[(&str, String)],
    basic: Option<(&str, &str)>,
) -> Result<OAuthTokenResponse, String> {
    let answer = post_json(http, endpoint, form, basic, "authorization server").await?;
    serde_json::from_value(answer)
        .map_err(|e| format!("the token response is not an OAuth token response: {e}"))
}

/// A form POST to a token endpoint of `who`; its JSON answer, or its OAuth error in words.
async fn post_json(
    http: &reqwest::Client,
    endpoint: &str,
    form: &[(&str, String)],
    basic: Option<(&str, &str)>,
    who: &str,
) -> Result<Value, String> {
    let mut request = http.post(endpoint).form(form);
    if let Some((id, secret)) = basic {
        // RFC 6749 section 2.3.1: both form-encoded before they are joined.
        let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        request = request.basic_auth(encode(id), Some(encode(secret)));
    }
    let response = request
        .send()
        .await
        .map_err(|e| format!("the token request to the {who} ({endpoint}) failed: {e}"))?;
    let status = response.status();
    let body = response
        .text()
        .await
        .map_err(|e| format!("the {who}'s token response could not be read: {e}"))?;
    let answer: Value = serde_json::from_str(&body).unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "the {who} refused the token request (HTTP {status}): {} {}",
            answer["error"].as_str().unwrap_or("no error code"),
            answer["error_description"].as_str().unwrap_or_default()
        ));
    }
    if !answer.is_object() {
        return Err(format!("the {who}'s token response is not a JSON object"));
    }
    Ok(answer)
}

/// Put `token` in the credential store, where the authorization manager reads it.
async fn keep(oauth: &McpOAuth, client_id: &str, token: OAuthTokenResponse) -> Result<(), String> {
    let credentials = StoredCredentials::new(
        client_id.to_owned(),
        Some(token),
        oauth.scopes.clone(),
        now_secs(),
    );
    oauth
        .store
        .save(credentials)
        .await
        .map_err(|e| format!("the token could not be stored: {e}"))
}

fn now_secs() -> Option<u64> {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .ok()
}

#[cfg(test)]
mod jwt_tests {
    //! Keys made for these tests only (`openssl genpkey`), never used anywhere else.
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;

    use super::SigningKey;
    use crate::endpoint::Secret;

    const EC: &str = include_str!("testdata/ec-p256.pem");
    const RSA_PKCS8: &str = include_str!("testdata/rsa-pkcs8.pem");
    const RSA_PKCS1: &str = include_str!("testdata/rsa-pkcs1.pem");

    fn key(pem: &str, algorithm: &str) -> SigningKey {
        SigningKey {
            pem: Secret(pem.to_owned()),
            algorithm: algorithm.to_owned(),
        }
    }

    fn part(token: &str, n: usize) -> serde_json::Value {
        let part = token.split('.').nth(n).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    }

    #[test]
    fn an_assertion_names_the_client_and_the_server_and_is_signed() {
        for (pem, algorithm) in [
            (EC, "ES256"),
            (RSA_PKCS8, "RS256"),
            (RSA_PKCS1, "RS256"),
            (RSA_PKCS8, "PS384"),
        ] {
            let token = key(pem, algorithm)
                .assertion("agent", "https://auth.example")
                .unwrap_or_else(|e| panic!("{algorithm}: {e}"));
            assert_eq!(token.split('.').count(), 3, "{token}");
            assert_eq!(part(&token, 0)["alg"], algorithm);
            let claims = part(&token, 1);
            assert_eq!(claims["iss"], "agent");
            assert_eq!(claims["sub"], "agent");
            assert_eq!(claims["aud"], "https://auth.example");
            let (iat, exp) = (
                claims["iat"].as_u64().unwrap(),
                claims["exp"].as_u64().unwrap(),
            );
            assert_eq!(exp - iat, 300);
            assert_eq!(claims["jti"].as_str().unwrap().len(), 32);
            assert!(!token.split('.').nth(2).unwrap().is_empty(), "signed");
        }
        let one = key(EC, "ES256").assertion("a", "b").unwrap();
        let two = key(EC, "ES256").assertion("a", "b").unwrap();
        assert_ne!(
            part(&one, 1)["jti"],
            part(&two, 1)["jti"],
            "a new jti each time"
        );
    }

    #[test]
    fn credentials_go_over_tls_or_stay_on_this_host() {
        use super::secure;
        assert!(secure("https://auth.example/token", "x").is_ok());
        assert!(secure("http://127.0.0.1:9/token", "x").is_ok());
        assert!(secure("http://localhost:9/token", "x").is_ok());
        let refused = secure("http://auth.example/token", "the ID token").unwrap_err();
        assert!(
            refused.contains("not HTTPS") && refused.contains("the ID token"),
            "{refused}"
        );
        assert!(secure("not a url", "x").unwrap_err().contains("not a URL"));
    }

    #[test]
    fn a_key_that_cannot_sign_says_why() {
        let refused =
            |pem: &str, algorithm: &str| key(pem, algorithm).assertion("a", "b").unwrap_err();
        let wrong = refused(EC, "RS256");
        assert!(wrong.contains("needs an RSA private key"), "{wrong}");
        assert!(refused(RSA_PKCS1, "ES256").contains("needs an EC private key"));
        assert!(refused(EC, "HS256").contains("shared secret"));
        assert!(refused(EC, "XY123").contains("not a JWT signing algorithm"));
        assert!(refused("not a key", "ES256").contains("could not be read"));
        // The key's text is never in an error.
        let error = refused(RSA_PKCS1, "ES256");
        assert!(!error.contains("MII"), "{error}");
    }
}
