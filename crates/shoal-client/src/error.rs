//! The client's errors.

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
    /// The server could not be reached.
    #[error("cannot connect to shoal server at {addr}: {source}")]
    Connect {
        /// The address tried.
        addr: String,
        /// The transport error.
        source: tonic::transport::Error,
    },
    /// The request was refused before it was sent.
    #[error("{0}")]
    InvalidArgument(String),
}

impl ClientError {
    /// The gRPC code, if the server answered.
    pub fn code(&self) -> Option<tonic::Code> {
        match self {
            ClientError::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// No such table or family.
    pub fn is_not_found(&self) -> bool {
        self.code() == Some(tonic::Code::NotFound)
    }

    /// The table exists already.
    pub fn is_already_exists(&self) -> bool {
        self.code() == Some(tonic::Code::AlreadyExists)
    }

    /// The table is disabled (or must be).
    pub fn is_failed_precondition(&self) -> bool {
        self.code() == Some(tonic::Code::FailedPrecondition)
    }

    /// A malformed request.
    pub fn is_invalid_argument(&self) -> bool {
        matches!(self, ClientError::InvalidArgument(_))
            || self.code() == Some(tonic::Code::InvalidArgument)
    }

    /// Worth retrying later (region moving, server busy).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.code(),
            Some(tonic::Code::Unavailable | tonic::Code::ResourceExhausted)
        )
    }

    /// The server's message (or this error's text).
    pub fn message(&self) -> String {
        match self {
            ClientError::Status { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

impl From<tonic::Status> for ClientError {
    fn from(s: tonic::Status) -> ClientError {
        ClientError::Status {
            code: s.code(),
            message: s.message().to_string(),
        }
    }
}
