@testable import ImgWarmSupport
@testable import ImgWarmDecode
// libFuzzer entry point for image validation: the sniffers, header
// readers, the decode memory estimate and the libpng / libjpeg-turbo /
// giflib shims (built with ASan by scripts/fuzz.sh), with and without full
// decoding.

@_cdecl("LLVMFuzzerTestOneInput")
public func imageFuzz(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let raw = UnsafeRawBufferPointer(start: data, count: count)
    // The decode memory estimate's walks (the JPEG markers, the ISO-BMFF
    // boxes down to a grid's items) under ASan, for every sniffed format.
    if let format = ImageFormat.sniff(raw) { _ = DecodeMemory.estimate(format, raw, maxPixels: 1 << 20) }
    for decode in [true, false] {
        var options = ValidationOptions()
        options.decode = decode
        // A modest pixel limit keeps each input fast (the real default
        // lets a 10000x10000 image decode, too slow per fuzz input).
        options.maxPixels = 1 << 20
        switch ImageValidator.validate(raw, options: options) {
        case .success(let info):
            if let w = info.width, let h = info.height, UInt64(w) * UInt64(h) > options.maxPixels {
                fatalError("accepted \(w)x\(h) over the pixel limit")
            }
        case .failure(let why):
            if why.reason.isEmpty { fatalError("failure without a reason") }
        }
    }
    return 0
}
