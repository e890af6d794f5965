import CImageCodecs
import Foundation
import Testing
import TestSupport
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// A decoder library that cannot be opened (lazy_codecs.c) is IW_NO_DECODER
/// with a reason naming the package to install, and a `noDecoder` failure,
/// never a verdict on the data. `iw_codec_open_check` opens a given name
/// exactly as the first image of the format opens the library; the
/// packages expected come from this machine's dpkg (TestSupport's
/// CodecLibrary), not from imgwarm's table.
@Suite struct DecodeMissingLibrary {
    static let libraries: [(String, iw_codec_library)] = [("avif", IW_CODEC_AVIF), ("heif", IW_CODEC_HEIF), ("jxl", IW_CODEC_JXL)]

    static func check(_ which: iw_codec_library, _ soname: String?) -> (Int32, String) {
        var r = iw_result()
        let status = iw_codec_open_check(which, soname, &r)
        let reason = withUnsafeBytes(of: r.reason) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return (status, reason)
    }

    /// The library on this machine (TestSupport's rule when it cannot be
    /// found: skipped, failed under CI).
    static func library(_ name: String) throws -> CodecLibrary {
        switch CodecLibrary.find(name) {
        case .success(let lib): return lib
        case .failure(let why): try prerequisiteMissing("\(why)")
        }
    }

    @Test(arguments: libraries.indices) func theBuildsOwnLibraryOpens(_ i: Int) {
        let (status, reason) = Self.check(Self.libraries[i].1, nil)
        #expect(status == Int32(IW_OK.rawValue), "\(Self.libraries[i].0): \(reason)")
    }

    @Test(arguments: libraries.indices) func anAbsentLibraryNamesItsPackage(_ i: Int) throws {
        let (name, which) = Self.libraries[i]
        let lib = try Self.library(name)
        let (status, reason) = Self.check(which, "lib\(name).so.999")
        #expect(status == Int32(IW_NO_DECODER.rawValue))
        #expect(reason == "cannot validate, lib\(name) is not installed (apt-get install \(lib.package))")
    }

    @Test(arguments: libraries.indices) func aDamagedLibraryIsNamedWithTheLoadersReason(_ i: Int) throws {
        let (name, which) = Self.libraries[i]
        let lib = try Self.library(name)
        let dir = try lib.damagedCopyFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/" + lib.soname
        let (status, reason) = Self.check(which, path)
        #expect(status == Int32(IW_NO_DECODER.rawValue))
        // Then glibc's dlerror without the path it starts with: "file too
        // short" or "invalid ELF header".
        let prefix = "cannot validate, \(path) cannot be loaded (apt-get install --reinstall \(lib.package)): "
        #expect(reason.hasPrefix(prefix), "\(reason)")
        #expect(!reason.dropFirst(prefix.count).hasPrefix(path), "\(reason)")
    }

    /// The bridge turns the status into a `noDecoder` failure prefixed with
    /// the format's name: what warm and cache verify tell apart from a
    /// broken image.
    @Test func theBridgeMarksTheFailureAsNoDecoder() {
        let failure = CodecBridge.failure(status: IW_NO_DECODER, format: .heic, reason: "cannot validate, libheif is not installed (apt-get install libheif1)",
                                          width: 0, height: 0, maxPixels: 100)
        #expect(failure == ValidationFailure("HEIC: cannot validate, libheif is not installed (apt-get install libheif1)", kind: .noDecoder))
        let memory = CodecBridge.failure(status: IW_NO_MEMORY, format: .heic, reason: "out of memory", width: 0, height: 0, maxPixels: 100)
        #expect(memory?.kind == .invalid)
    }
}
