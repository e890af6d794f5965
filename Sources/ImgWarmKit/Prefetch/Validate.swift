public typealias ImageValidation = (UnsafeRawBufferPointer, ValidationOptions) -> Result<ImageInfo, ValidationFailure>

/// The validation stage: a downloaded body's verdict (ImageValidator in
/// production). Runs on the validation workers, off the engine's thread.
struct ValidateStage {
    let validate: ImageValidation
    let options: ValidationOptions

    func check(_ body: [UInt8]) -> Result<ImageInfo, ValidationFailure> {
        body.withUnsafeBytes { raw in
            if raw.isEmpty { return .failure(ValidationFailure("empty body")) }
            return validate(raw, options)
        }
    }
}
