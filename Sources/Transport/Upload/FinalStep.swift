/// The request that makes an uploaded file appear under its name, which decides how the
/// job keeps the promise that nothing on the server is replaced.
public enum FinalStep: Sendable, Equatable {
    /// The chunk that reaches the length (tus). tus has no conditional form of it, so the
    /// target is looked at again just before that chunk, which is held back to one byte.
    case lastChunk
    /// `finish`, a conditional request of its own (Nextcloud's `MOVE .file`, a temporary's
    /// `MOVE`, both with `Overwrite: F`): a name taken meanwhile costs no byte sent again.
    case finish
    /// The one request that sends the whole file (a direct `PUT` with `If-None-Match: *`).
    case wholeFileSend
}
