// In Support: Warm records it, Report and cache verify name it.

/// The error class of a failed entry.
public enum EntryError: UInt8, CaseIterable, Sendable {
    case none = 0
    case httpStatus, badImage, tooLarge, timeout, network, tls, invalidURL, disk, cancelled, budget
    /// The body could not be validated: its format's decoder library is
    /// missing here. The machine's fault, not the URL's.
    case noDecoder
    /// An https URL redirected to http (`RedirectRule`).
    case insecureRedirect
    /// Its decoder took more CPU time than `--decode-timeout`: a local
    /// limit, not the URL's fault.
    case tooComplex

    public var name: String? {
        switch self {
        case .none: return nil
        case .httpStatus: return "http-status"
        case .badImage: return "bad-image"
        case .tooLarge: return "too-large"
        case .timeout: return "timeout"
        case .network: return "network"
        case .tls: return "tls"
        case .invalidURL: return "invalid-url"
        case .disk: return "disk"
        case .cancelled: return "cancelled"
        case .budget: return "budget"
        case .noDecoder: return "no-decoder"
        case .insecureRedirect: return "insecure-redirect"
        case .tooComplex: return "too-complex"
        }
    }
}
