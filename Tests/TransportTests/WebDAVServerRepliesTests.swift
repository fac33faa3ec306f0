import Testing
@testable import Transport

/// Nextcloud (Sabre): `d:`, `oc:`, `nc:` and `s:` declared on the root, `&quot;` around
/// ETags, one 404 propstat for what a folder lacks, several checksums in one element.
private let nextcloud = """
<?xml version="1.0"?>
<d:multistatus xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">\
<d:response><d:href>/remote.php/dav/files/alice/Photos/</d:href><d:propstat><d:prop>\
<d:getlastmodified>Mon, 04 Mar 2024 09:12:45 GMT</d:getlastmodified><d:resourcetype><d:collection/></d:resourcetype>\
<d:quota-used-bytes>5242880</d:quota-used-bytes><d:quota-available-bytes>-3</d:quota-available-bytes>\
<d:getetag>&quot;65e590bd6d4a1&quot;</d:getetag><oc:fileid>184</oc:fileid><oc:permissions>RGDNVCK</oc:permissions>\
<oc:size>5242880</oc:size><nc:has-preview>false</nc:has-preview><nc:hidden>false</nc:hidden>\
</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat><d:propstat><d:prop><d:getcontentlength/><d:getcontenttype/>\
<oc:checksums/><nc:upload_time/></d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>\
<d:response><d:href>/remote.php/dav/files/alice/Photos/IMG_20240301_101500.jpg</d:href><d:propstat><d:prop>\
<d:getlastmodified>Fri, 01 Mar 2024 10:15:00 GMT</d:getlastmodified><d:getcontentlength>3145728</d:getcontentlength>\
<d:resourcetype/><d:getetag>&quot;a8f5f167f44f4964e6c998dee827110c&quot;</d:getetag><d:getcontenttype>image/jpeg</d:getcontenttype>\
<oc:fileid>185</oc:fileid><oc:permissions>RGDNVW</oc:permissions><oc:size>3145728</oc:size><oc:checksums>\
<oc:checksum>SHA1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 MD5:9e107d9d372bb6826bd81d3542a419d6 SHA256:d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592</oc:checksum></oc:checksums>\
<nc:has-preview>true</nc:has-preview><nc:upload_time>1709288100</nc:upload_time><nc:creation_time>0</nc:creation_time>\
</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>
"""

/// Apache mod_dav: `D:` on the root, its live properties under `lp1:` (DAV:) and `lp2:`
/// (Apache's own) declared again on every response, one line per element, lock structure
/// inside properties, and a property a client stored under a default namespace.
private let apache = """
<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:" xmlns:ns0="DAV:">
<D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
<D:href>/dav/photos/</D:href>
<D:propstat>
<D:prop>
<lp1:resourcetype><D:collection/></lp1:resourcetype>
<lp1:creationdate>2024-03-01T10:00:00Z</lp1:creationdate>
<lp1:getlastmodified>Fri, 01 Mar 2024 10:00:00 GMT</lp1:getlastmodified>
<lp1:getetag>"1000-612a5b0c3e2c0"</lp1:getetag>
<D:supportedlock>
<D:lockentry>
<D:lockscope><D:exclusive/></D:lockscope>
<D:locktype><D:write/></D:locktype>
</D:lockentry>
<D:lockentry>
<D:lockscope><D:shared/></D:lockscope>
<D:locktype><D:write/></D:locktype>
</D:lockentry>
</D:supportedlock>
<D:lockdiscovery/>
<D:getcontenttype>httpd/unix-directory</D:getcontenttype>
</D:prop>
<D:status>HTTP/1.1 200 OK</D:status>
</D:propstat>
</D:response>
<D:response xmlns:lp1="DAV:" xmlns:lp2="http://apache.org/dav/props/">
<D:href>/dav/photos/IMG_0001.jpg</D:href>
<D:propstat>
<D:prop>
<lp1:resourcetype/>
<lp1:creationdate>2024-03-01T10:15:00Z</lp1:creationdate>
<lp1:getcontentlength>2743921</lp1:getcontentlength>
<lp1:getlastmodified>Fri, 01 Mar 2024 10:15:00 GMT</lp1:getlastmodified>
<lp1:getetag>"29de71-612a5b0c3e2c0"</lp1:getetag>
<lp2:executable>F</lp2:executable>
<Win32LastModifiedTime xmlns="urn:schemas-microsoft-com:">Fri, 01 Mar 2024 10:15:00 GMT</Win32LastModifiedTime>
<D:lockdiscovery/>
<D:getcontenttype>image/jpeg</D:getcontenttype>
</D:prop>
<D:status>HTTP/1.1 200 OK</D:status>
</D:propstat>
<D:propstat>
<D:prop>
<ns0:quota-available-bytes/>
</D:prop>
<D:status>HTTP/1.1 404 Not Found</D:status>
</D:propstat>
</D:response>
</D:multistatus>
"""

/// oCIS (reva, Go's encoding/xml): spaces in the href, `&#34;` for the quotes of an ETag,
/// empty elements written as start and end tag, three checksums in one element.
private let ocis = """
<?xml version="1.0" encoding="UTF-8"?>
<d:multistatus xmlns:s="http://sabredav.org/ns" xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">\
<d:response><d:href>/remote.php/dav/spaces/1284d238-aa92-42ce-bdc4-0b0000009157%244c510ada-c86b-4815-8820-42cdf82c3d51/Photos/</d:href>\
<d:propstat><d:prop><oc:id>1284d238-aa92-42ce-bdc4-0b0000009157$4c510ada-c86b-4815-8820-42cdf82c3d51!0a6c6aa8-5a7a-4a5b-9c0e-3d8c3f1f4b6e</oc:id>\
<oc:spaceid>4c510ada-c86b-4815-8820-42cdf82c3d51</oc:spaceid><oc:name>Photos</oc:name>\
<d:getetag>&#34;5d3d0a6ef0b2b8c1a4e7b2f3c9d1e0a7&#34;</d:getetag><oc:permissions>RDNVCKZP</oc:permissions>\
<d:resourcetype><d:collection></d:collection></d:resourcetype><oc:size>3145728</oc:size>\
<d:getlastmodified>Mon, 04 Mar 2024 09:12:45 GMT</d:getlastmodified><oc:favorite>0</oc:favorite></d:prop>\
<d:status>HTTP/1.1 200 OK</d:status></d:propstat><d:propstat><d:prop><d:quota-used-bytes></d:quota-used-bytes></d:prop>\
<d:status>HTTP/1.1 404 Not Found</d:status></d:propstat></d:response>\
<d:response><d:href>/remote.php/dav/spaces/1284d238-aa92-42ce-bdc4-0b0000009157%244c510ada-c86b-4815-8820-42cdf82c3d51/Photos/Caf%C3%A9%20%26%20Bar.jpg</d:href>\
<d:propstat><d:prop><oc:name>Café &amp; Bar.jpg</oc:name><d:getetag>&#34;8c2e5b0f3a1d4e6f9b7c0a2d4e6f8a1b&#34;</d:getetag>\
<d:resourcetype></d:resourcetype><d:getcontentlength>3145728</d:getcontentlength><d:getcontenttype>image/jpeg</d:getcontenttype>\
<oc:checksums><oc:checksum>SHA1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12 MD5:9e107d9d372bb6826bd81d3542a419d6 ADLER32:5bdc0fda</oc:checksum></oc:checksums>\
<d:getlastmodified>Mon, 04 Mar 2024 09:12:45 GMT</d:getlastmodified></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>\
</d:multistatus>
"""

@Suite("Multistatus replies of real servers")
struct WebDAVServerRepliesTests {
    typealias P = MultistatusParser.PropertyName
    static let nextcloudNS = "http://nextcloud.org/ns"

    @Test("a Nextcloud listing: oc: and nc: properties by namespace, 404 propstat ignored, checksums split")
    func nextcloudReply() throws {
        let responses = try MultistatusParser.parse(Array(nextcloud.utf8))
        #expect(responses.map(\.href) == ["/remote.php/dav/files/alice/Photos/", "/remote.php/dav/files/alice/Photos/IMG_20240301_101500.jpg"])
        let folder = responses[0], photo = responses[1]
        #expect(folder.isCollection && !photo.isCollection)
        #expect(folder[P.etag] == "\"65e590bd6d4a1\"")
        #expect(folder[P(Self.nextcloudNS, "has-preview")] == "false")
        #expect(folder[P(Self.nextcloudNS, "upload_time")] == nil) // only in the 404 propstat
        #expect(folder[P.contentLength] == nil)
        #expect(photo[P(P.owncloud, "fileid")] == "185")
        #expect(photo[P(Self.nextcloudNS, "upload_time")] == "1709288100")
        #expect(photo.checksums.count == 3)
        let item = try RemoteItem(path: "/Photos/IMG_20240301_101500.jpg", response: photo)
        #expect(item.size == 3_145_728)
        #expect(item.sha256 == "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592")
    }

    @Test("an Apache mod_dav listing: lp1:/lp2: declared per response, a default namespace that ends with its element")
    func apacheReply() throws {
        let responses = try MultistatusParser.parse(Array(apache.utf8))
        #expect(responses.count == 2)
        let folder = responses[0], photo = responses[1]
        #expect(folder.isCollection)
        #expect(folder[P.contentType] == "httpd/unix-directory")
        #expect(folder[P.etag] == "\"1000-612a5b0c3e2c0\"")
        // The lock entries are structure inside a property: its own text is what is left.
        #expect(folder[P(P.dav, "supportedlock")] == "")
        #expect(!photo.isCollection)
        #expect(photo[P.contentLength] == "2743921")
        #expect(photo[P("http://apache.org/dav/props/", "executable")] == "F")
        #expect(photo[P("urn:schemas-microsoft-com:", "Win32LastModifiedTime")] == "Fri, 01 Mar 2024 10:15:00 GMT")
        // After the default namespace's element, names are DAV: again.
        #expect(photo[P.contentType] == "image/jpeg")
        #expect(photo[P.quotaAvailable] == nil)
        #expect(photo[P("", "getcontenttype")] == nil)
    }

    @Test("an oCIS listing: &#34; quotes, start-and-end empty elements, an escaped & in a name")
    func ocisReply() throws {
        let responses = try MultistatusParser.parse(Array(ocis.utf8))
        #expect(responses.count == 2)
        let folder = responses[0], photo = responses[1]
        #expect(folder.isCollection && !photo.isCollection)
        #expect(folder[P.etag] == "\"5d3d0a6ef0b2b8c1a4e7b2f3c9d1e0a7\"")
        #expect(folder[P.quotaUsed] == nil)
        #expect(photo[P(P.owncloud, "name")] == "Café & Bar.jpg")
        #expect(photo.checksums == ["SHA1:2fd4e1c67a2d28fced849ee1bb76e7391b93eb12", "MD5:9e107d9d372bb6826bd81d3542a419d6", "ADLER32:5bdc0fda"])
        let item = try RemoteItem(path: "/Photos/Café & Bar.jpg", response: photo)
        #expect(item.etag == "\"8c2e5b0f3a1d4e6f9b7c0a2d4e6f8a1b\"")
        #expect(item.size == 3_145_728)
    }

    @Test("the reader names each element of the three replies by namespace, whatever prefix each server picked")
    func sameNamesWhateverPrefix() throws {
        func davNames(_ xml: String) throws -> Set<String> {
            var reader = try XMLReader(Array(xml.utf8))
            var names = Set<String>()
            while let event = try reader.next() {
                if case .start(let name, _) = event, name.namespace == P.dav { names.insert(name.localName) }
            }
            return names
        }
        let common: Set = ["multistatus", "response", "href", "propstat", "prop", "status", "resourcetype", "collection", "getetag"]
        for (server, xml) in [("Nextcloud", nextcloud), ("Apache", apache), ("oCIS", ocis)] {
            #expect(try common.isSubset(of: davNames(xml)), "\(server)")
        }
    }
}
