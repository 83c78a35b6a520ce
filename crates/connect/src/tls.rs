//! TLS settings for `rediss://` targets, turned into one rustls client
//! configuration shared by every connection of a run.
//!
//! The trust roots are the CA file when one is given, else the system's
//! store (what redis-cli and most clients trust). `--tls-insecure` must be
//! asked for by name: it accepts any certificate for any name, which is
//! sometimes what a test deployment needs and never a default.

use crate::secret::Secret;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the user asked for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// PEM file of the CA certificates to trust instead of the system's.
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate chain (mutual TLS), with `key_file`.
    pub cert_file: Option<PathBuf>,
    /// PEM private key of the client certificate.
    pub key_file: Option<PathBuf>,
    /// The name to verify the server's certificate against (and send as
    /// SNI) instead of the URL's host.
    pub server_name: Option<String>,
    /// Accept any server certificate.
    pub insecure: bool,
}

/// A ready client configuration and the name it checks.
#[derive(Clone)]
pub struct Tls {
    pub(crate) config: Arc<ClientConfig>,
    pub(crate) server_name: ServerName<'static>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

/// Why the TLS settings cannot be used (names the file or flag).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(String);

impl TlsOptions {
    /// True when any TLS flag was given.
    pub fn any(&self) -> bool {
        *self != TlsOptions::default()
    }

    /// Builds the configuration; `host` is the URL's host, the default
    /// server name.
    ///
    /// # Errors
    /// [`TlsError`] naming the flag or file that is wrong.
    pub fn build(&self, host: &str) -> Result<Tls, TlsError> {
        let roots = match (&self.ca_file, self.insecure) {
            (_, true) => None,
            (Some(ca), false) => {
                let label = format!("--tls-ca {}", ca.display());
                Some(trust(Some((certs(ca, "--tls-ca")?, &label)))?)
            }
            (None, false) => Some(trust(None)?),
        };
        let client = match (&self.cert_file, &self.key_file) {
            (Some(cert), Some(key)) => Some((certs(cert, "--tls-cert")?, private_key(key)?)),
            (None, None) => None,
            (Some(_), None) => return Err(TlsError("--tls-cert needs --tls-key".into())),
            (None, Some(_)) => return Err(TlsError("--tls-key needs --tls-cert".into())),
        };
        let name = self.server_name.as_deref().unwrap_or(host);
        configure(roots, client, name)
    }

    /// The settings with their files read, for a process that has no
    /// access to them (a scaled-out worker on another machine). `host` is
    /// the URL's host, the default server name.
    ///
    /// # Errors
    /// When a file cannot be read (named with its flag).
    pub fn material(&self, host: &str) -> Result<TlsMaterial, TlsError> {
        let read = |path: &Option<PathBuf>, flag: &str| -> Result<Option<String>, TlsError> {
            path.as_ref()
                .map(|p| {
                    std::fs::read_to_string(p)
                        .map_err(|e| TlsError(format!("{flag} {}: {e}", p.display())))
                })
                .transpose()
        };
        Ok(TlsMaterial {
            ca_pem: read(&self.ca_file, "--tls-ca")?,
            cert_pem: read(&self.cert_file, "--tls-cert")?,
            key_pem: read(&self.key_file, "--tls-key")?.map(Secret::new),
            server_name: self.server_name.as_deref().unwrap_or(host).to_string(),
            insecure: self.insecure,
        })
    }
}

/// TLS settings with their files' contents instead of paths (see
/// [`TlsOptions::material`]); the private key is a [`Secret`], never
/// printed.
#[derive(Debug, Clone, Default)]
pub struct TlsMaterial {
    /// The CA certificates to trust (PEM); `None`: the system's store.
    pub ca_pem: Option<String>,
    /// The client certificate chain (PEM), for mutual TLS.
    pub cert_pem: Option<String>,
    /// Its private key (PEM).
    pub key_pem: Option<Secret>,
    /// The name the server's certificate is checked against.
    pub server_name: String,
    /// Accept any server certificate.
    pub insecure: bool,
}

impl TlsMaterial {
    /// The client configuration, as [`TlsOptions::build`] makes it from the
    /// files.
    ///
    /// # Errors
    /// When a PEM text holds nothing usable (named by its flag).
    pub fn build(&self) -> Result<Tls, TlsError> {
        let roots = match (&self.ca_pem, self.insecure) {
            (_, true) => None,
            (Some(pem), false) => Some(trust(Some((
                pem_certs(pem.as_bytes(), "--tls-ca")?,
                "--tls-ca",
            )))?),
            (None, false) => Some(trust(None)?),
        };
        let client = match (&self.cert_pem, &self.key_pem) {
            (Some(cert), Some(key)) => Some((
                pem_certs(cert.as_bytes(), "--tls-cert")?,
                PrivateKeyDer::from_pem_slice(key.expose().as_bytes())
                    .map_err(|e| TlsError(format!("--tls-key: {e}")))?,
            )),
            (None, None) => None,
            _ => return Err(TlsError("--tls-cert and --tls-key go together".into())),
        };
        configure(roots, client, &self.server_name)
    }
}

/// The roots to verify against: the `--tls-ca` certificates of `ca` (with
/// the name messages give them), else the system's store (what redis-cli
/// trusts).
fn trust(ca: Option<(Vec<CertificateDer<'static>>, &str)>) -> Result<RootCertStore, TlsError> {
    let mut roots = RootCertStore::empty();
    match ca {
        Some((certs, label)) => {
            for cert in certs {
                roots
                    .add(cert)
                    .map_err(|e| TlsError(format!("{label}: unusable certificate: {e}")))?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                // One odd certificate in the system store is not a reason to fail.
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err(TlsError(
                    "TLS: the system has no CA certificates; give --tls-ca FILE".into(),
                ));
            }
        }
    }
    Ok(roots)
}

type ClientAuth = (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>);

/// One configuration from its parts: `roots` to verify against (`None`:
/// accept any certificate), a client certificate and key, the server name.
fn configure(
    roots: Option<RootCertStore>,
    client: Option<ClientAuth>,
    name: &str,
) -> Result<Tls, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError(format!("TLS: {e}")))?;
    let builder = match roots {
        None => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAny(provider))),
        Some(roots) => builder.with_root_certificates(roots),
    };
    let config = match client {
        Some((certs, key)) => builder
            .with_client_auth_cert(certs, key)
            .map_err(|e| TlsError(format!("--tls-cert/--tls-key: {e}")))?,
        None => builder.with_no_client_auth(),
    };
    let server_name = ServerName::try_from(name.to_string()).map_err(|_| {
        TlsError(format!(
            "'{name}' is not a valid TLS server name (see --tls-server-name)"
        ))
    })?;
    Ok(Tls {
        config: Arc::new(config),
        server_name,
    })
}

fn pem_certs(pem: &[u8], flag: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs: Vec<_> = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError(format!("{flag}: {e}")))?;
    if certs.is_empty() {
        return Err(TlsError(format!("{flag}: no PEM certificate")));
    }
    Ok(certs)
}

fn certs(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsError(format!("{flag} {}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(TlsError(format!(
            "{flag} {}: no PEM certificate in the file",
            path.display()
        )));
    }
    Ok(certs)
}

fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path)
        .map_err(|e| TlsError(format!("--tls-key {}: {e}", path.display())))
}

/// `--tls-insecure`: every certificate is accepted, but handshake
/// signatures are still checked, so the session is at least encrypted to
/// whoever holds the presented key.
#[derive(Debug)]
struct AcceptAny(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
