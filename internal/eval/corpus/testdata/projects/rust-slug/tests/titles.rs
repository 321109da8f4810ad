use slug::slugify;

#[test]
fn digits_are_kept() {
    assert_eq!(slugify("Top 10 crates of 2024"), "top-10-crates-of-2024");
}

#[test]
fn german_sharp_s() {
    assert_eq!(slugify("Straße"), "strasse");
}

#[test]
fn only_punctuation_gives_empty_slug() {
    assert_eq!(slugify("?!"), "");
}
