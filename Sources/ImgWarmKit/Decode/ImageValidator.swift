/// Judges downloaded or cached bytes: is this a usable image?
///
/// The format is sniffed from the data itself (never a file name or a
/// Content-Type). JPEG, PNG and GIF are decoded in full by libjpeg-turbo,
/// libpng and giflib (CImageCodecs) unless `options.decode` is off; the
/// other formats SDWebImage knows pass on their signature, with the
/// dimensions their header gives cheaply, unless `options.strictFormats`.
///
/// Thread-safe: no shared state; each call owns its decoder.
public enum ImageValidator {
    public static func validate(_ bytes: UnsafeRawBufferPointer, options: ValidationOptions) -> Result<ImageInfo, ValidationFailure> {
        guard bytes.count > 0 else { return .failure(ValidationFailure("empty body")) }
        guard let format = ImageFormat.sniff(bytes) else {
            return .failure(ValidationFailure("not an image (\(ContentGuess.describe(bytes)))"))
        }
        if format.isDecodedHere {
            if options.decode { return CodecBridge.decode(format, bytes, maxPixels: options.maxPixels) }
            return headerOnly(format, bytes, options)
        }
        if options.strictFormats {
            return .failure(ValidationFailure("\(format.displayName) is not accepted: strict formats allow only JPEG, PNG and GIF"))
        }
        return headerOnly(format, bytes, options)
    }

    public static func validate(_ bytes: [UInt8], options: ValidationOptions) -> Result<ImageInfo, ValidationFailure> {
        bytes.withUnsafeBytes { validate($0, options: options) }
    }

    /// Signature plus header: dimensions when the header gives them, and
    /// the pixel limit still applies to those.
    private static func headerOnly(_ format: ImageFormat, _ bytes: UnsafeRawBufferPointer, _ options: ValidationOptions) -> Result<ImageInfo, ValidationFailure> {
        ImageHeader.read(format, bytes).flatMap { info in
            if let failure = Limits.check(info, maxPixels: options.maxPixels) { return .failure(failure) }
            return .success(info)
        }
    }
}
