import Foundation

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
        }
    }

    init(_ c: DownloadErrorClass) {
        switch c {
        case .httpStatus: self = .httpStatus
        case .tooLarge: self = .tooLarge
        case .timeout: self = .timeout
        case .network: self = .network
        case .tls: self = .tls
        case .invalidURL: self = .invalidURL
        case .insecureRedirect: self = .insecureRedirect
        case .cancelled: self = .cancelled
        }
    }
}

/// The result of one entry, packed into 16 bytes so that a million fit in
/// memory next to the plan.
public struct EntryResult: Sendable {
    /// outcome (high nibble) | error (low nibble)
    private var kind: UInt8 = 0
    public var attempts: UInt8 = 0
    /// status (low 10 bits) | format code (4 bits) | file exists (1 bit)
    private var packed: UInt16 = 0
    /// Width and height saturate at 65535 (the report then says 65535).
    private var width16: UInt16 = 0
    private var height16: UInt16 = 0
    public var bytes: UInt32 = 0
    public var milliseconds: UInt32 = 0

    public init() {}

    public var outcome: Outcome {
        get { Outcome(rawValue: kind >> 4) ?? .pending }
        set { kind = newValue.rawValue << 4 | (kind & 0x0F) }
    }
    public var error: EntryError {
        get { EntryError(rawValue: kind & 0x0F) ?? .none }
        set { kind = (kind & 0xF0) | (newValue.rawValue & 0x0F) }
    }
    /// Last HTTP status, 0 for none.
    public var status: UInt16 {
        get { packed & 0x3FF }
        set { packed = (packed & ~0x3FF) | (newValue <= 999 ? newValue : 0) }
    }
    public var format: ImageFormat? {
        get {
            let code = Int((packed >> 10) & 0x0F)
            return code == 0 ? nil : ImageFormat.allCases[code - 1]
        }
        set {
            let code = newValue.map { UInt16(ImageFormat.allCases.firstIndex(of: $0)! + 1) } ?? 0
            packed = (packed & ~(0x0F << 10)) | code << 10
        }
    }
    /// Whether the entry's file is in the cache after the run.
    public var fileExists: Bool {
        get { packed & 0x8000 != 0 }
        set { packed = newValue ? packed | 0x8000 : packed & 0x7FFF }
    }
    public var width: UInt32 {
        get { UInt32(width16) }
        set { width16 = UInt16(clamping: newValue) }
    }
    public var height: UInt32 {
        get { UInt32(height16) }
        set { height16 = UInt16(clamping: newValue) }
    }
}

/// What a response said about its body, for the report: the media type the
/// server named and whether the response varies on `Accept` (a CDN that
/// serves WebP or AVIF to clients that ask for them).
public struct ResponseFacts: Sendable, Equatable {
    public var contentType: String?
    public var variesOnAccept: Bool
    public init(contentType: String?, vary: String?) {
        self.contentType = contentType
        self.variesOnAccept = Self.variesOnAccept(vary)
    }

    /// `Vary: Accept`, `Vary: Accept-Encoding, accept`, or `Vary: *`
    /// (RFC 9110 12.5.5: field names, case-insensitive, comma-separated).
    public static func variesOnAccept(_ vary: String?) -> Bool {
        guard let vary else { return false }
        return vary.split(separator: ",").contains { field in
            let name = field.trimmingCharacters(in: .whitespaces).lowercased()
            return name == "accept" || name == "*"
        }
    }
}

/// Results of every entry plus running totals, shared by the feeding
/// thread, the validation workers and the progress printer.
public final class RunLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [EntryResult]
    /// One-line reasons of failures, by entry index.
    private var reasons: [Int: String] = [:]
    /// The cache path each entry ended at (absolute), for cached/stored ones.
    private var counts = [Int](repeating: 0, count: Outcome.allCases.count)
    private var errorCounts = [Int](repeating: 0, count: EntryError.allCases.count)
    public private(set) var bytesDownloaded: UInt64 = 0
    public private(set) var bytesTotal: UInt64 = 0
    public let total: Int
    public let startTime = Date()

    public init(entries: Int, problems: Int) {
        results = [EntryResult](repeating: EntryResult(), count: entries)
        total = entries + problems
        // Unusable lines count as failed entries from the start.
        counts[Int(Outcome.failed.rawValue)] = problems
        errorCounts[Int(EntryError.invalidURL.rawValue)] = problems
    }

    /// Exact dimensions of the rare images over 65535 pixels on a side.
    private var largeDimensions: [Int: (Int, Int)] = [:]
    /// Frame counts other than 1 (animations; 0: not known from a header).
    private var frameCounts: [Int: Int] = [:]
    /// Each entry's Content-Type as a code into `mediaTypes` (0: none,
    /// `overflowMedia`: in `rareMediaTypes`), plus the `Vary: Accept` bit:
    /// a byte per entry, since a run sees few distinct types.
    private var mediaCodes: [UInt8] = []
    private var mediaTypes: [String] = []
    private var mediaIndex: [String: UInt8] = [:]
    private var rareMediaTypes: [Int: String] = [:]
    private static let variesBit: UInt8 = 0x80
    private static let overflowMedia: UInt8 = 0x7F

    /// Records an entry's result; `image` (what validation learned) and
    /// `response` come with downloaded entries.
    public func record(_ index: Int, _ result: EntryResult, reason: String? = nil,
                       image: ImageInfo? = nil, response: ResponseFacts? = nil) {
        lock.lock()
        defer { lock.unlock() }
        if let w = image?.width, let h = image?.height, w > 65535 || h > 65535 { largeDimensions[index] = (w, h) }
        if let image, image.frames != 1 { frameCounts[index] = image.frames ?? 0 }
        if let response { recordMedia(index, response) }
        let old = results[index]
        if old.outcome != .pending {
            counts[Int(old.outcome.rawValue)] -= 1
            errorCounts[Int(old.error.rawValue)] -= 1
        }
        results[index] = result
        counts[Int(result.outcome.rawValue)] += 1
        errorCounts[Int(result.error.rawValue)] += 1
        if let reason { reasons[index] = reason }
        if result.outcome == .downloaded || result.outcome == .revalidated && result.bytes > 0 {
            bytesDownloaded += UInt64(result.bytes)
        }
        bytesTotal += UInt64(result.bytes)
    }

    public func result(_ index: Int) -> EntryResult {
        lock.lock()
        defer { lock.unlock() }
        return results[index]
    }

    /// Width and height of an entry's image, nil when unknown.
    public func dimensions(_ index: Int) -> (Int, Int)? {
        lock.lock()
        defer { lock.unlock() }
        if let d = largeDimensions[index] { return d }
        let r = results[index]
        return r.width == 0 && r.height == 0 ? nil : (Int(r.width), Int(r.height))
    }

    public func reason(_ index: Int) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return reasons[index]
    }

    /// Frames of the entry's image: 1 unless recorded otherwise, nil when
    /// the entry has no image format or its header did not say.
    public func frames(_ index: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard results[index].format != nil else { return nil }
        guard let n = frameCounts[index] else { return 1 }
        return n == 0 ? nil : n
    }

    /// The Content-Type and `Vary: Accept` of the entry's response.
    public func response(_ index: Int) -> ResponseFacts? {
        lock.lock()
        defer { lock.unlock() }
        guard index < mediaCodes.count, mediaCodes[index] != 0 else { return nil }
        let code = mediaCodes[index] & ~Self.variesBit
        var facts = ResponseFacts(contentType: nil, vary: nil)
        facts.variesOnAccept = mediaCodes[index] & Self.variesBit != 0
        if code == Self.overflowMedia {
            facts.contentType = rareMediaTypes[index]
        } else if code > 0 {
            facts.contentType = mediaTypes[Int(code) - 1]
        }
        return facts
    }

    /// Called with the lock held.
    private func recordMedia(_ index: Int, _ facts: ResponseFacts) {
        if mediaCodes.isEmpty { mediaCodes = [UInt8](repeating: 0, count: results.count) }
        var code: UInt8 = 0
        if let type = facts.contentType {
            if let known = mediaIndex[type] {
                code = known
            } else if mediaTypes.count + 1 < Int(Self.overflowMedia) {
                mediaTypes.append(type)
                code = UInt8(mediaTypes.count)
                mediaIndex[type] = code
            } else {
                code = Self.overflowMedia
                rareMediaTypes[index] = type
            }
        }
        mediaCodes[index] = code | (facts.variesOnAccept ? Self.variesBit : 0)
    }

    public struct Snapshot: Sendable {
        public var counts: [Outcome: Int]
        public var errors: [EntryError: Int]
        public var bytesDownloaded: UInt64
        public var bytesTotal: UInt64
        public var total: Int
        public var elapsed: Double
        public var done: Int { counts.filter { $0.key != .pending }.values.reduce(0, +) }
        public subscript(_ o: Outcome) -> Int { counts[o] ?? 0 }
    }

    public func snapshot() -> Snapshot {
        lock.lock()
        defer { lock.unlock() }
        var c: [Outcome: Int] = [:]
        for o in Outcome.allCases where o != .pending { c[o] = counts[Int(o.rawValue)] }
        var e: [EntryError: Int] = [:]
        for x in EntryError.allCases where x != .none && errorCounts[Int(x.rawValue)] > 0 { e[x] = errorCounts[Int(x.rawValue)] }
        return Snapshot(counts: c, errors: e, bytesDownloaded: bytesDownloaded, bytesTotal: bytesTotal,
                        total: total, elapsed: Date().timeIntervalSince(startTime))
    }
}
