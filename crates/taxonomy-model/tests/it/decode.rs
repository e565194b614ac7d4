//! Each answer's decoder on its own: what it keeps, what the caller supplies, and the errors
//! that name the field and where.

use taxonomy_model::decode::{self, DecodeError};
use taxonomy_model::{AspectMode, ExpiredCategory};

#[test]
fn each_answer_decodes_with_what_the_call_asked_for() {
    let aspects = decode::item_aspects(
        9355,
        br#"{"aspects":[{"localizedAspectName":"Brand","aspectConstraint":{"aspectMode":"SELECTION_ONLY","aspectRequired":true},"aspectValues":[{"localizedValue":"Apple"}]}]}"#,
    )
    .unwrap();
    assert_eq!(aspects.category_id, 9355);
    let brand = aspects.get("BRAND").unwrap();
    assert_eq!(brand.mode, Some(AspectMode::SelectionOnly));
    assert_eq!(brand.value_names().collect::<Vec<_>>(), ["Apple"]);

    let suggestions = decode::category_suggestions(
        0,
        br#"{"categorySuggestions":[{"category":{"categoryId":"9355","categoryName":"Cell Phones & Smartphones"},
          "categoryTreeNodeAncestors":[{"categoryId":"15032","categoryName":"Cell Phones & Accessories","categoryTreeNodeLevel":1}],
          "categoryTreeNodeLevel":2}],"categoryTreeVersion":"134"}"#,
    )
    .unwrap();
    assert_eq!(
        (suggestions.tree_id, suggestions.tree_version.as_str()),
        (0, "134")
    );
    assert_eq!(
        suggestions.suggestions[0].path(),
        "Cell Phones & Accessories > Cell Phones & Smartphones"
    );

    let default =
        decode::default_tree_id(br#"{"categoryTreeId":"77","categoryTreeVersion":"129"}"#).unwrap();
    assert_eq!(
        (default.tree_id, default.tree_version.as_str()),
        (77, "129")
    );

    let expired = decode::expired_categories(
        3,
        br#"{"expiredCategories":[{"fromCategoryId":"100","toCategoryId":"200"}]}"#,
    )
    .unwrap();
    assert_eq!(expired.tree_id, 3);
    assert_eq!(expired.mappings, [ExpiredCategory { from: 100, to: 200 }]);
    assert_eq!(expired.replacement(100), Some(200));

    let properties = decode::compatibility_properties(
        33559,
        br#"{"compatibilityProperties":[{"name":"Make","localizedName":"Marke"}]}"#,
    )
    .unwrap();
    assert_eq!(
        properties.properties[0].localized_name.as_deref(),
        Some("Marke")
    );

    let values = decode::compatibility_property_values(
        33559,
        "Make",
        br#"{"compatibilityPropertyValues":[{"value":"Audi"},{"value":"BMW"}]}"#,
    )
    .unwrap();
    assert_eq!((values.property.as_str(), values.values.len()), ("Make", 2));
}

#[test]
fn errors_name_the_field_and_where() {
    let field = |e: DecodeError| match e {
        DecodeError::Field(message) => message,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        field(decode::item_aspects(1, br#"{"aspects":[{},{"aspectValues":[]}]}"#).unwrap_err()),
        "aspects[0].localizedAspectName is missing"
    );
    assert_eq!(
        field(
            decode::category_suggestions(
                0,
                br#"{"categorySuggestions":[{"category":{"categoryId":9355}}]}"#
            )
            .unwrap_err()
        ),
        r#"categorySuggestions[0].category.categoryId 9355 is a number, expected a decimal string like "9355""#
    );
    assert_eq!(
        field(decode::default_tree_id(br#"{"categoryTreeVersion":"1"}"#).unwrap_err()),
        "categoryTreeId is missing"
    );
    assert_eq!(
        field(
            decode::expired_categories(
                0,
                br#"{"expiredCategories":[{"fromCategoryId":"1","toCategoryId":"x"}]}"#
            )
            .unwrap_err()
        ),
        r#"expiredCategories[0].toCategoryId "x" is not a decimal string"#
    );

    // Not JSON, or the wrong JSON type: serde_json's error, with where it failed.
    let e = decode::item_aspects(1, b"{\"aspects\": [").unwrap_err();
    assert!(matches!(e, DecodeError::Json(_)), "{e:?}");
    assert!(
        e.to_string()
            .starts_with("not the expected JSON (Eof error at line 1"),
        "{e}"
    );
    let e = decode::item_aspects(1, br#"{"aspects": {}}"#).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("not the documented shape: invalid type: map"),
        "{e}"
    );
    assert!(std::error::Error::source(&e).is_some());
}
