import COpenSSL

/// OpenSSL set up for a process of ours, before anything else calls it: the first call sets
/// it up (a chunk's digest through EVP, libcurl's own set-up), with whatever that call asks.
public enum OpenSSLSetUp {
    /// Sets up OpenSSL's crypto library without the text of its error reasons: loading them
    /// made thousands of them resident in every process that made a request or a digest
    /// (0.6 MB of OpenSSL's tables and the table they fill). A TLS failure is told in our
    /// words (`FailureWords`), with curl's detail beside them: a certificate that cannot be
    /// verified says why ("self-signed certificate"), and a failed handshake keeps the text
    /// of the TLS library's own reasons ("wrong version number"), which libcurl loads as
    /// before. Only a reason of the crypto library itself (a certificate file that cannot
    /// be read as one, say) shows as its code, which `openssl errstr CODE` explains. The
    /// rest of OpenSSL's set-up, its configuration file first, is as libcurl does it.
    public static func withoutErrorTexts() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS), nil)
    }
}
