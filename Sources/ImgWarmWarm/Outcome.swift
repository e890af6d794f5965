import Foundation
import ImgWarmSupport
import ImgWarmDecode
import ImgWarmDownload

// Download's error classes as the entry's (EntryError lives in Support:
// Report and cache verify name them too, as Outcome).
extension EntryError {
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
        case .disk: self = .disk
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
