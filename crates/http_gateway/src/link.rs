//! The HTTP side's link to the event loop: the bounded queue of requests and the one-shot
//! channel each answer goes back on. The loop's end uses only these types (no HTTP server).

use crate::json::Answer;
use crate::record::ApiInput;
use crossbeam_channel::Receiver;

/// Where a request's answer goes back.
pub type Reply = tokio::sync::oneshot::Sender<Answer>;

/// One request for the event loop, with the channel its answer goes back on.
pub struct ApiRequest {
    pub input: ApiInput,
    pub reply: Reply,
}

/// The loop's end of the queue.
pub type ApiQueue = Receiver<ApiRequest>;
