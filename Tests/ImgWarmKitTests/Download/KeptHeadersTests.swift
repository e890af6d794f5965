import CCurl
import Testing

/// The header lines `imgwarm_kept_headers_line` keeps for
/// `CurlTransfer.finish`: what curl_easy_header(name, 0, CURLH_HEADER, -1)
/// answered before (curl/curl, lib/headers.c: the first header of that
/// name of the last request, names compared ignoring case, values without
/// surrounding blanks, trailers and 1xx/CONNECT headers not counted).
@Suite struct KeptHeadersTests {
    /// Feeds `lines` as libcurl hands them to CURLOPT_HEADERFUNCTION and
    /// returns the kept values by name.
    private func keep(_ lines: [String]) -> [String: String] {
        var kept = imgwarm_kept_headers()
        defer { imgwarm_kept_headers_clear(&kept) }
        for line in lines {
            var bytes = Array(line.utf8).map { CChar(bitPattern: $0) }
            let taken = bytes.withUnsafeMutableBufferPointer { imgwarm_kept_headers_line($0.baseAddress, 1, $0.count, &kept) }
            #expect(taken == line.utf8.count)
        }
        let names = ["ETag", "Last-Modified", "Vary", "Cache-Control", "Expires", "Date", "Age", "Content-Encoding"]
        var out: [String: String] = [:]
        for (i, name) in names.enumerated() {
            if let v = imgwarm_kept_header(&kept, Int32(i)) { out[name] = String(cString: v) }
        }
        return out
    }

    @Test func keepsTheFirstOfEachNameIgnoringCaseAndBlanks() {
        let kept = keep(["HTTP/1.1 200 OK\r\n", "etag:   \"a1\" \r\n", "ETag: \"second\"\r\n", "CACHE-CONTROL:max-age=60\r\n",
                         "Content-Type: image/png\r\n", "Date: Fri, 27 Nov 2026 09:00:00 GMT\r\n", "Ages: 5\r\n",
                         "Age:\t7\r\n", "content-encoding:  gzip\r\n", "Content-Encoding: br\r\n", "\r\n"])
        #expect(kept == ["ETag": "\"a1\"", "Cache-Control": "max-age=60", "Date": "Fri, 27 Nov 2026 09:00:00 GMT", "Age": "7",
                         "Content-Encoding": "gzip"])
    }

    @Test func aStatusLineStartsOverAndTrailersAreLeftOut() {
        // A redirect hop, a 100 Continue, a proxy's CONNECT answer: only the
        // last response's headers count.
        let kept = keep(["HTTP/1.1 200 Connection established\r\n", "Vary: x\r\n", "\r\n",
                         "HTTP/1.1 100 Continue\r\n", "\r\n",
                         "HTTP/2 200 \r\n", "last-modified: Thu, 26 Nov 2026 08:00:00 GMT\r\n", "\r\n",
                         "ETag: \"trailer\"\r\n", "Expires: 0\r\n"])
        #expect(kept == ["Last-Modified": "Thu, 26 Nov 2026 08:00:00 GMT"])
    }

    @Test func linesWithoutANameOrEmptyValuesAreHandled() {
        let kept = keep(["HTTP/1.1 304 Not Modified\r\n", "garbage without colon\r\n", "ETag:\r\n", "Vary: a,\r\n", "\r\n"])
        #expect(kept == ["ETag": "", "Vary": "a,"])
    }
}
