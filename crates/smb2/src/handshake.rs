//! Connection setup: NEGOTIATE (2.0.2 or 2.1), SESSION_SETUP with raw
//! NTLMSSP (NEGOTIATE, then AUTHENTICATE answering the CHALLENGE), and
//! TREE_CONNECT to `\\host\share`.
//!
//! Owns the credentials while they are needed and the setup decisions:
//! dialect limits and multi-credit, whether to sign (only when the server
//! requires it), and which failure the caller hears about. Allocates freely:
//! it runs once per session.

use crate::ambient;
use crate::error::{ProtocolError, SetupError};
use crate::header::{command, Header};
use crate::ntlm::{self, Identity};
use crate::outbound::Outbound;
use crate::reply::{self, SESSION_IS_GUEST, SESSION_IS_NULL};
use crate::request::{self, CAP_LARGE_MTU, SIGNING_REQUIRED};
use crate::status;
use crate::Credentials;

/// Dialects offered. 3.x needs what this client lacks: 3.0 a different
/// signing (AES-CMAC) and 3.1.1 negotiate contexts and a preauth hash.
pub(crate) const DIALECTS: [u16; 2] = [0x0202, 0x0210];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Negotiate,
    Challenge,
    Authenticate,
    TreeConnect,
}

/// After a handshake reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Progress {
    Sent,
    Connected,
    Failed(SetupError),
}

#[derive(Debug, Clone)]
pub(crate) struct Handshake {
    host: String,
    share: String,
    credentials: Credentials,
    stage: Stage,
    signing_required: bool,
    /// Kept from the AUTHENTICATE until the session is known not to be a guest's.
    session_key: Option<[u8; 16]>,
}

impl Handshake {
    /// Queues NEGOTIATE.
    pub fn start(tx: &mut Outbound, host: &str, share: &str, credentials: Credentials) -> Handshake {
        let guid = ambient::unique_bytes();
        tx.send(command::NEGOTIATE, 0, |o| request::negotiate(o, &DIALECTS, CAP_LARGE_MTU, guid));
        Handshake {
            host: host.to_owned(),
            share: share.to_owned(),
            credentials,
            stage: Stage::Negotiate,
            signing_required: false,
            session_key: None,
        }
    }

    pub fn on_reply(&mut self, tx: &mut Outbound, h: &Header, msg: &[u8]) -> Result<Progress, ProtocolError> {
        match self.stage {
            Stage::Negotiate => {
                if h.status != status::OK {
                    return Ok(Progress::Failed(SetupError::Negotiate(h.status)));
                }
                let n = reply::negotiate(msg)?;
                if !DIALECTS.contains(&n.dialect) {
                    return Err(ProtocolError::Dialect(n.dialect));
                }
                let multi_credit = n.dialect >= 0x0210 && n.capabilities & CAP_LARGE_MTU != 0;
                tx.negotiated(n.dialect, multi_credit, n.max_read, n.max_write, n.max_transact);
                self.signing_required = n.security_mode & SIGNING_REQUIRED != 0;
                let mut token = Vec::with_capacity(64);
                ntlm::negotiate_message(&mut token);
                tx.send(command::SESSION_SETUP, 0, |o| request::session_setup(o, &token));
                self.stage = Stage::Challenge;
            }
            Stage::Challenge => {
                if h.status != status::MORE_PROCESSING_REQUIRED {
                    return Ok(Progress::Failed(logon_failure(h.status)));
                }
                tx.session_id = h.session_id;
                let (_, token) = reply::session_setup(msg)?;
                let challenge = ntlm::parse_challenge(token)?;
                let c = &self.credentials;
                let who = Identity { user: &c.user, password: &c.password, domain: &c.domain };
                let unique = ambient::unique_bytes();
                let client_challenge =
                    [unique[0], unique[1], unique[2], unique[3], unique[4], unique[5], unique[6], unique[7]];
                let mut auth = Vec::with_capacity(256 + token.len());
                let key =
                    ntlm::authenticate_message(&mut auth, &who, &challenge, client_challenge, ambient::filetime_now());
                tx.send(command::SESSION_SETUP, 0, |o| request::session_setup(o, &auth));
                self.stage = Stage::Authenticate;
                // Sign only what the server insists on: signing costs a
                // SHA-256 pass over every WRITE.
                self.session_key = self.signing_required.then_some(key);
            }
            Stage::Authenticate => {
                if h.status != status::OK {
                    return Ok(Progress::Failed(logon_failure(h.status)));
                }
                let (flags, _) = reply::session_setup(msg)?;
                if flags & reply::SESSION_ENCRYPT_DATA != 0 {
                    return Ok(Progress::Failed(SetupError::EncryptionRequired));
                }
                if let (Some(key), true) = (self.session_key, flags & (SESSION_IS_GUEST | SESSION_IS_NULL) == 0) {
                    tx.enable_signing(&key);
                }
                tx.send(command::TREE_CONNECT, 0, |o| request::tree_connect(o, &self.host, &self.share));
                self.stage = Stage::TreeConnect;
            }
            Stage::TreeConnect => {
                return Ok(match h.status {
                    status::OK if reply::tree_connect(msg)? & reply::SHARE_ENCRYPT_DATA != 0 => {
                        Progress::Failed(SetupError::EncryptionRequired)
                    }
                    status::OK => {
                        tx.tree_id = h.tree_id;
                        Progress::Connected
                    }
                    status::BAD_NETWORK_NAME => Progress::Failed(SetupError::BadShare),
                    other => Progress::Failed(SetupError::TreeConnect(other)),
                });
            }
        }
        Ok(Progress::Sent)
    }
}

fn logon_failure(status: u32) -> SetupError {
    match status {
        status::LOGON_FAILURE | status::WRONG_PASSWORD | status::NO_SUCH_USER => SetupError::LogonFailure,
        other => SetupError::SessionSetup(other),
    }
}
