/// The curl tool's rules for the options that say how to reach a server:
/// which CA bundle and folder to trust, and how a .netrc file is used.
/// Pure: the caller passes the flags and the environment.
public enum CurlTransportOptions {
    /// The CA bundle and folder, as the curl tool chooses them
    /// (curl/curl, src/tool_operate.c, the CA set-up before the transfers):
    /// `--cacert` or `--capath` given, only they count (the environment is
    /// not read); otherwise `CURL_CA_BUNDLE` names the bundle, and only
    /// without it `SSL_CERT_DIR` names the folder and `SSL_CERT_FILE` the
    /// bundle. Empty variables count as unset. Nil: libcurl's default.
    public static func certificateAuthorities(cacert: String?, capath: String?,
                                              environment: [String: String]) -> (file: String?, path: String?) {
        if cacert != nil || capath != nil { return (cacert, capath) }
        func value(_ name: String) -> String? {
            guard let v = environment[name], !v.isEmpty else { return nil }
            return v
        }
        if let bundle = value("CURL_CA_BUNDLE") { return (bundle, nil) }
        return (value("SSL_CERT_FILE"), value("SSL_CERT_DIR"))
    }

    /// `--netrc` (required), `--netrc-optional`, `--netrc-file` (required
    /// unless `--netrc-optional`), as the curl tool sets CURLOPT_NETRC.
    public static func netrc(netrc: Bool, optional: Bool, file: String?) -> NetrcUse {
        if optional { return .optional }
        if netrc || file != nil { return .required }
        return .ignored
    }
}
