//! The client's errors: server statuses, connection failures, and requests
//! refused before they were sent.

/// What a client call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server answered with an error status.
    #[error("{message} ({code:?})")]
    Status {
        /// The gRPC code (see the proto file for what each means).
        code: tonic::Code,
        /// The server's message.
        message: String,
    },
    /// The connection failed during the call (the server may be gone; the
    /// call may or may not have been applied).
    #[error("{message} ({code:?}, connection failed)")]
    Transport {
        /// The gRPC code the transport reported.
        code: tonic::Code,
        /// What failed.
        message: String,
    },
    /// The server could not be reached.
    #[error("cannot connect to shoal server at {addr}: {}", error_chain(source))]
    Connect {
        /// The address tried.
        addr: String,
        /// The transport error.
        source: tonic::transport::Error,
    },
    /// The request was refused before it was sent.
    #[error("{0}")]
    InvalidArgument(String),
    /// The server's answer does not have the shape the API promises.
    #[error("malformed server response: {0}")]
    Protocol(String),
}

/// An error and its causes, `outer: inner: innermost` (tonic's transport
/// error alone says only "transport error").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

impl ClientError {
    /// The gRPC code, if the server answered.
    pub fn code(&self) -> Option<tonic::Code> {
        match self {
            ClientError::Status { code, .. } | ClientError::Transport { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// No such table or family (NOT_FOUND).
    pub fn is_not_found(&self) -> bool {
        self.code() == Some(tonic::Code::NotFound)
    }

    /// The table exists already (ALREADY_EXISTS).
    pub fn is_already_exists(&self) -> bool {
        self.code() == Some(tonic::Code::AlreadyExists)
    }

    /// The table is disabled, or must be disabled first (FAILED_PRECONDITION).
    pub fn is_failed_precondition(&self) -> bool {
        self.code() == Some(tonic::Code::FailedPrecondition)
    }

    /// A malformed request, refused by the client or by the server.
    pub fn is_invalid_argument(&self) -> bool {
        matches!(self, ClientError::InvalidArgument(_))
            || self.code() == Some(tonic::Code::InvalidArgument)
    }

    /// The region is moving or the server is unreachable (UNAVAILABLE).
    pub fn is_unavailable(&self) -> bool {
        self.code() == Some(tonic::Code::Unavailable)
    }

    /// The server is overloaded (RESOURCE_EXHAUSTED).
    pub fn is_resource_exhausted(&self) -> bool {
        self.code() == Some(tonic::Code::ResourceExhausted)
    }

    /// A server-side failure (INTERNAL).
    pub fn is_internal(&self) -> bool {
        self.code() == Some(tonic::Code::Internal)
    }

    /// Worth retrying later (region moving, server busy). The client has
    /// already retried such failures until its deadline.
    pub fn is_retryable(&self) -> bool {
        self.is_unavailable() || self.is_resource_exhausted()
    }

    /// The server's message (or this error's text).
    pub fn message(&self) -> String {
        match self {
            ClientError::Status { message, .. } | ClientError::Transport { message, .. } => {
                message.clone()
            }
            other => other.to_string(),
        }
    }
}

impl From<tonic::Status> for ClientError {
    fn from(s: tonic::Status) -> ClientError {
        // A status made by the client's own transport carries the local
        // error as its source; one the server sent does not.
        if std::error::Error::source(&s).is_some() {
            return ClientError::Transport {
                code: s.code(),
                message: s.message().to_string(),
            };
        }
        ClientError::Status {
            code: s.code(),
            message: s.message().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_follow_the_code() {
        let e = ClientError::from(tonic::Status::not_found("table \"t\" does not exist"));
        assert!(e.is_not_found() && !e.is_retryable());
        assert_eq!(e.message(), "table \"t\" does not exist");
        assert_eq!(e.to_string(), "table \"t\" does not exist (NotFound)");
        assert!(ClientError::from(tonic::Status::unavailable("moving")).is_retryable());
        assert!(ClientError::from(tonic::Status::resource_exhausted("busy")).is_retryable());
        assert!(ClientError::from(tonic::Status::already_exists("x")).is_already_exists());
        assert!(
            ClientError::from(tonic::Status::failed_precondition("x")).is_failed_precondition()
        );
        assert!(ClientError::InvalidArgument("x".into()).is_invalid_argument());
        assert!(ClientError::from(tonic::Status::invalid_argument("x")).is_invalid_argument());
        assert_eq!(ClientError::InvalidArgument("x".into()).code(), None);
    }
}
