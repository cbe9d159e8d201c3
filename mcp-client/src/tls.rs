//! The TLS provider every HTTP client of this crate uses (rustls with
//! ring), and the HTTP client of one server.

use hermes_runtime::config::SslVerify;

use crate::error::McpError;

/// Makes rustls's ring provider the process default, unless one is set.
/// reqwest is built here with rustls but no provider of its own (ring is
/// the one ureq uses; aws-lc-rs would need a C build), and it panics when
/// it builds a client with none installed. [`crate::McpClients::start`] calls
/// this; a program that builds reqwest clients (or rmcp's default HTTP
/// transport) before it calls it first.
pub fn install_tls_provider() {
    // Err means one is installed already (ours or the host's): fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The HTTP client of one server: rustls with the ring provider, the
/// system's roots (`ssl_verify: true`), only the CA bundle it names (a
/// path), or no certificate check (`false`), as the reference's httpx
/// `verify` does.
pub(crate) fn http_client(ssl_verify: &SslVerify) -> Result<reqwest::Client, McpError> {
    install_tls_provider();
    let mut builder = reqwest::Client::builder();
    match ssl_verify {
        SslVerify::Off => builder = builder.tls_danger_accept_invalid_certs(true),
        SslVerify::CaFile(path) => {
            let pem = std::fs::read(path).map_err(|error| McpError::CaBundleRead {
                path: path.clone(),
                error,
            })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|error| {
                McpError::CaBundleNotPem {
                    path: path.clone(),
                    error,
                }
            })?;
            if certs.is_empty() {
                return Err(McpError::CaBundleEmpty { path: path.clone() });
            }
            builder = builder.tls_certs_only(certs);
        }
        _ => {}
    }
    builder.build().map_err(McpError::HttpClient)
}
