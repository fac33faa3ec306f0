/// How a whole-file PUT gets to its name without ever leaving half a file there.
///
/// Which servers need which:
/// - Nextcloud and ownCloud write a PUT to a part file of their own and rename it when the
///   body is whole: `direct` is safe.
/// - Apache httpd's mod_dav_fs does the same (a `.davfs.tmp` file renamed on success), so
///   `direct` would do there too; but a plain WebDAV server cannot be told apart reliably.
/// - wsgidav and `rclone serve webdav` (VFS cache off) write into the final file as the
///   bytes arrive: an interrupted PUT leaves a truncated file under the real name. They
///   need `viaTemporary`.
/// So every plain WebDAV server that offers MOVE gets `viaTemporary`; one without MOVE
/// gets `direct`, and an interruption there can leave a partial file (say so to the person).
public enum PutPlacement: String, Sendable {
    /// PUT straight to the final name.
    case direct
    /// PUT to a hidden temporary name in the same folder, then MOVE it over the final name.
    case viaTemporary = "via-temporary"
}
