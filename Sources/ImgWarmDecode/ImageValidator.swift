import ImgWarmSupport
/// Judges downloaded or cached bytes: is this a usable image?
///
/// The format is sniffed from the data itself (never a file name or a
/// Content-Type). Formats with a decoder (`CodecBridge.decoder(for:)`) are
/// decoded in full unless `options.decode` is off; the other formats an app
/// shows pass on their signature, with the dimensions and lengths their
/// header gives cheaply (`ImageHeader`), unless `options.strictFormats`.
/// Binary data of no known format is `unknown` and passes too, as an app
/// may still show it; text, HTML, JSON and gzip bodies are not images.
///
/// Thread-safe: no shared state; each call owns its decoder.
public enum ImageValidator {
    public static func validate(_ bytes: UnsafeRawBufferPointer, options: ValidationOptions) -> Result<ImageInfo, ValidationFailure> {
        guard bytes.count > 0 else { return .failure(ValidationFailure("empty body")) }
        let format: ImageFormat
        if let sniffed = ImageFormat.sniff(bytes) {
            format = sniffed
        } else if let what = ContentGuess.nonImage(bytes) {
            return .failure(ValidationFailure("not an image (\(what))"))
        } else if let decoder = ImageFormat.sdWebImageDecoder(bytes) {
            // No PNG or GIF signature, yet SDWebImage's coder of that format
            // gets it: its decoder is the judge (a damaged signature fails).
            format = decoder
        } else {
            format = .unknown
        }
        if format.isDecodedHere {
            if options.decode { return decode(format, bytes, options) }
            return headerOnly(format, bytes, options)
        }
        if options.strictFormats {
            let what = format == .unknown ? "unknown format (\(ContentGuess.signature(bytes)))" : format.displayName
            return .failure(ValidationFailure("\(what) is not accepted: strict formats allow only \(strictList)"))
        }
        return headerOnly(format, bytes, options)
    }

    public static func validate(_ bytes: [UInt8], options: ValidationOptions) -> Result<ImageInfo, ValidationFailure> {
        bytes.withUnsafeBytes { validate($0, options: options) }
    }

    /// A full decode, within the decode memory budget when there is one:
    /// the image's share is taken before its decoder allocates anything.
    private static func decode(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, _ options: ValidationOptions) -> Result<ImageInfo, ValidationFailure> {
        guard let gate = options.decodeMemory else {
            return CodecBridge.decode(format, bytes, maxPixels: options.maxPixels, cpuSeconds: options.decodeTimeout)
        }
        let need = DecodeMemory.estimate(format, bytes, maxPixels: options.maxPixels)
        return gate.withShare(need) {
            let verdict = CodecBridge.decode(format, bytes, maxPixels: options.maxPixels, memoryShare: need,
                                             cpuSeconds: options.decodeTimeout)
            // Given back before the share is, or the heap would keep it.
            if need >= BufferAllocator.releasedAfterDecode { BufferAllocator.releaseFreeMemory() }
            return verdict
        } ?? .failure(DecodeMemory.overBudget(format, bytes, estimate: need, limit: gate.limit))
    }

    /// The formats decoded in full here (each with a decoder in
    /// `CodecBridge`), as `--strict-formats` reasons name them:
    /// `JPEG, PNG, GIF, ... and JPEG XL`.
    static let strictList: String = {
        let names = ImageFormat.allCases.filter(\.isDecodedHere).map(\.displayName)
        return names.dropLast().joined(separator: ", ") + " and " + names.last!
    }()

    /// Signature plus header: dimensions when the header gives them, and
    /// the pixel limit still applies to those.
    private static func headerOnly(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, _ options: ValidationOptions) -> Result<ImageInfo, ValidationFailure> {
        ImageHeader.read(format, bytes, maxPixels: options.maxPixels).flatMap { info in
            if let failure = Limits.check(info, maxPixels: options.maxPixels) { return .failure(failure) }
            return .success(info)
        }
    }
}
