//! The fetchItemAspects reader on its own: keys in any order, the place of bad JSON and of a bad
//! entry, and the bound on what it holds of one value.

use std::io::Write as _;

use taxonomy_model::{AspectsFileError, ItemAspectsReader};

#[test]
fn reader_names_the_place_of_bad_json_and_bad_entries() {
    let gzip = |json: &str| {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(json.as_bytes()).unwrap();
        gz.finish().unwrap()
    };
    // Keys in any order, unknown keys skipped, strings with escaped quotes and brackets.
    let body = gzip(
        r#"{"note":{"a":["]\"}"]},"categoryAspects":[{"category":{"categoryId":"1","categoryName":"A \"}\" B"},"aspects":[]}],"categoryTreeVersion":"9","categoryTreeId":"3"}"#,
    );
    let mut reader = ItemAspectsReader::from_gzip(&body[..]);
    assert_eq!(reader.next().unwrap().unwrap().category.name, "A \"}\" B");
    assert!(reader.next().is_none());
    assert_eq!(
        (reader.tree_id(), reader.tree_version()),
        (Some(3), Some("9"))
    );

    let body = gzip(r#"{"categoryAspects":[{"category":{"categoryId":"1"}} {"x":1}]}"#);
    let mut reader = ItemAspectsReader::from_gzip(&body[..]);
    assert!(reader.next().unwrap().is_ok());
    let err = reader.next().unwrap().unwrap_err();
    assert!(
        matches!(err, AspectsFileError::Syntax { offset: 53, .. }),
        "{err:?}"
    );
    assert!(reader.next().is_none(), "the iterator ends after an error");

    let body = gzip(
        r#"{"categoryAspects":[{"category":{"categoryId":"1"}},{"category":{"categoryId":2}}]}"#,
    );
    let errors: Vec<String> = ItemAspectsReader::from_gzip(&body[..])
        .filter_map(Result::err)
        .map(|e| e.to_string())
        .collect();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].contains("categoryAspects[1]") && errors[0].contains("is a number"),
        "{errors:?}"
    );
}

/// The reader holds no value larger than its limit: the issue's file was 2 MB of gzip around
/// one 2 GiB string (88 s and 6.3 GB to read). Here an entry, a key and a top-level value
/// each pass the limit; the reader stops there.
#[test]
fn reader_bounds_each_value_it_holds() {
    /// `head`, then `len` bytes of `x`, then `tail`, made as they are read.
    struct Generated {
        head: &'static [u8],
        len: u64,
        tail: &'static [u8],
        at: u64,
    }
    impl std::io::Read for Generated {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let (head, body) = (self.head.len() as u64, self.len);
            let mut n = 0;
            while n < buf.len() {
                let at = self.at;
                buf[n] = if at < head {
                    self.head[at as usize]
                } else if at < head + body {
                    b'x'
                } else if let Some(&b) = self.tail.get((at - head - body) as usize) {
                    b
                } else {
                    break;
                };
                self.at += 1;
                n += 1;
            }
            Ok(n)
        }
    }
    let entry = Generated {
        head: br#"{"categoryTreeId":"0","categoryAspects":[{"category":{"categoryId":"1","categoryName":""#,
        len: 100 << 20,
        tail: br#""},"aspects":[]}]}"#,
        at: 0,
    };
    // The default limit (64 MiB) against an entry of 100 MiB.
    let started = std::time::Instant::now();
    let mut reader = ItemAspectsReader::new(entry);
    let err = reader.next().unwrap().unwrap_err();
    let AspectsFileError::ValueTooLarge { offset, limit } = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        limit,
        ItemAspectsReader::<std::fs::File>::DEFAULT_MAX_VALUE_BYTES
    );
    assert_eq!(limit, 64 << 20);
    assert!(offset < (65 << 20), "{offset}");
    assert!(reader.next().is_none(), "the iteration ends");
    eprintln!("refused after {:?}", started.elapsed());

    for (head, tail) in [
        (&br#"{""#[..], &br#"":1}"#[..]),
        (&br#"{"note":""#[..], &br#""}"#[..]),
        (&br#"{"categoryTreeVersion":""#[..], &br#""}"#[..]),
    ] {
        let source = Generated {
            head,
            len: 2 << 30,
            tail,
            at: 0,
        };
        let mut reader = ItemAspectsReader::new(source).with_max_value_bytes(1 << 20);
        let err = reader.next().unwrap().unwrap_err();
        assert!(
            matches!(err, AspectsFileError::ValueTooLarge { limit, .. } if limit == 1 << 20),
            "{err:?}"
        );
        assert!(err.to_string().contains("over 1048576 bytes"), "{err}");
    }
}
