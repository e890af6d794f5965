/// What validation learned of an image.
public struct ImageInfo: Sendable, Equatable {
    public var format: ImageFormat
    public var width: Int?
    public var height: Int?
    /// Frames of an animated GIF (1 for still images), when known.
    public var frames: Int?
    public init(format: ImageFormat, width: Int? = nil, height: Int? = nil, frames: Int? = nil) {
        self.format = format
        self.width = width
        self.height = height
        self.frames = frames
    }
}

/// Why data is not a usable image: one line, e.g.
/// `truncated PNG: premature end of data after 1 of 64 rows`; or why it
/// could not be judged here at all (`kind`).
public struct ValidationFailure: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The data is no usable image: the URL (or the file) is at fault.
        case invalid
        /// The format's decoder library cannot be opened on this machine
        /// (AVIF, HEIF, JPEG XL: lazy_codecs.h): nothing was judged, so
        /// nothing may be stored, blamed on the URL or deleted.
        case noDecoder
        /// Its decoder would need more memory than the whole of
        /// `--decode-memory` (DecodeMemory): not judged either; the entry
        /// fails as `too-large`, a cached file is kept.
        case overDecodeMemory
        /// Its decoder used more CPU time than `--decode-timeout` allows
        /// and was stopped: not judged; the entry fails as `too-complex`
        /// (a local limit, not the URL's fault), a cached file is kept.
        case tooComplex
    }
    public var reason: String
    public var kind: Kind
    public init(_ reason: String, kind: Kind = .invalid) {
        self.reason = reason
        self.kind = kind
    }
    public var description: String { reason }
}

public struct ValidationOptions: Sendable {
    /// Largest accepted width x height (decompression bombs are refused
    /// from the header, before any allocation).
    public var maxPixels: UInt64 = 100_000_000
    /// Reject formats that pass only on their signature (WebP, HEIC, ...).
    public var strictFormats: Bool = false
    /// false for `--no-validate`: sniffing only, no decoding.
    public var decode: Bool = true
    /// `--decode-memory`: shared by every validation of the run, so that
    /// the decoders together stay within it. Nil: no bound.
    public var decodeMemory: DecodeMemoryGate?
    /// `--decode-timeout`: CPU time one image's decoder may take on its
    /// thread (checked between scans, rows, frames or tiles, see
    /// docs/security.md); nil: no bound.
    public var decodeTimeout: Double? = ValidationOptions.defaultDecodeTimeout
    /// The default of `--decode-timeout`: 10 s of CPU, over twenty times
    /// what the slowest real image measured here needs (a 9999x9999
    /// progressive JPEG of 10 scans: under 0.5 s at 1/8 scale).
    public static let defaultDecodeTimeout: Double = 10
    public init() {}
}
