import ImgWarmDecode
import ImgWarmDownload
public typealias ImageValidation = (UnsafeRawBufferPointer, ValidationOptions) -> Result<ImageInfo, ValidationFailure>

/// The validation stage: a downloaded body's verdict (ImageValidator in
/// production). Runs on the validation workers, off the engine's thread.
struct ValidateStage {
    let validate: ImageValidation
    let options: ValidationOptions

    /// A body in memory or in its spill file (mapped read-only: the
    /// decoders take a buffer, and the mapping is page cache, not the
    /// process's own memory).
    func check(_ body: BodyBytes) -> Result<ImageInfo, ValidationFailure> {
        body.withUnsafeBytes { raw in
            if raw.isEmpty { return .failure(ValidationFailure("empty body")) }
            return validate(raw, options)
        }
    }

    func check(_ body: [UInt8]) -> Result<ImageInfo, ValidationFailure> {
        body.withUnsafeBytes { raw in
            if raw.isEmpty { return .failure(ValidationFailure("empty body")) }
            return validate(raw, options)
        }
    }
}
