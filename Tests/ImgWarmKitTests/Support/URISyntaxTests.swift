import Crypto
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// `URISyntax` claims that text it accepts is what `URL(string:)` gives
/// back unchanged, with the path where Foundation finds it. Checked on
/// generated URLs over an alphabet of every class of character.
@Suite struct URISyntaxTests {
    @Test func acceptedTextIsWhatFoundationLeavesAsIs() {
        let pieces = ["a", "Z", "0", "-", ".", "_", "~", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", ":", "@",
                      "/", "?", "#", "%41", "%e2", "%", "%4", "[", "]", "|", "^", "{", " ", "\"", "<", "é", "\\", "`"]
        var rng = SystemRandomNumberGenerator()
        var accepted = 0
        for _ in 0..<4000 {
            var text = ["http://", "https://", "HTTP://", "ftp://"].randomElement(using: &rng)!
            text += ["e.com", "u:p@e.com", "e.com:8080", "E.COM:", "@e.com", "e%41.com"].randomElement(using: &rng)!
            for _ in 0..<Int.random(in: 0...8, using: &rng) { text += pieces.randomElement(using: &rng)! }
            guard let syntax = URISyntax.parse(Array(text.utf8)) else { continue }
            accepted += 1
            let url = URL(string: text)
            #expect(url?.absoluteString == text, "\(text)")
            let path = String(decoding: Array(text.utf8)[syntax.path], as: UTF8.self)
            #expect(url?.path(percentEncoded: true) == path, "\(text)")
        }
        #expect(accepted > 500)
        #expect(URISyntax.parse(Array("https://e.com/a|b".utf8)) == nil)
        #expect(URISyntax.parse(Array("https://[::1]/a".utf8)) == nil)
        #expect(URISyntax.parse(Array("https:///a".utf8)) == nil)
    }

    /// The sets of bits give the chains of comparisons they replace, on
    /// every byte.
    @Test func characterSetsMatchTheirDefinitions() {
        for c in UInt8.min...UInt8.max {
            #expect(URISyntax.isRegNameChar(c) == (URISyntax.isUnreserved(c) || URISyntax.isSubDelim(c)), "\(c)")
            #expect(URISyntax.isPathChar(c) == (URISyntax.isPchar(c) || c == UInt8(ascii: "/")), "\(c)")
        }
    }
}
