// The names of what became of an entry, in Support: Warm records them,
// Report renders them, cache verify names the same error classes.

/// What became of one manifest entry (the outcomes of docs/cli-contract.md).
public enum Outcome: UInt8, CaseIterable, Sendable {
    /// Not reached: the run was interrupted, or `--budget` left it out.
    case pending = 0
    case downloaded, cached, revalidated, blocked, failed, duplicate, skipped
    /// `--dry-run`: what a real run would do; nothing was requested.
    case wouldDownload, wouldRevalidate

    public var name: String {
        switch self {
        case .pending: return "pending"
        case .downloaded: return "downloaded"
        case .cached: return "cached"
        case .revalidated: return "revalidated"
        case .blocked: return "blocked"
        case .failed: return "failed"
        case .duplicate: return "duplicate"
        case .skipped: return "skipped"
        case .wouldDownload: return "would-download"
        case .wouldRevalidate: return "would-revalidate"
        }
    }

    /// Outcomes only a dry run has (and a real run never counts).
    public var isDryRun: Bool { self == .wouldDownload || self == .wouldRevalidate }
}

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
