import pytest

from inventory.sku import InvalidSku, Sku, parse_sku


@pytest.mark.parametrize(
    "text,expected",
    [
        ("TOOL-0001", Sku("TOOL", 1, None)),
        ("glov-0010-l", Sku("GLOV", 10, "L")),
        ("  PA-9999-XXL ", Sku("PA", 9999, "XXL")),
    ],
)
def test_parse_valid(text, expected):
    assert parse_sku(text) == expected


def test_parse_error_on_empty():
    with pytest.raises(InvalidSku, match="empty SKU"):
        parse_sku("   ")


@pytest.mark.parametrize("text", ["TOOL-1", "T-0001", "TOOL-0001-XXXL", "TOOL_0001"])
def test_malformed_sku_fails_validation(text):
    with pytest.raises(InvalidSku, match="malformed SKU"):
        parse_sku(text)


def test_str_round_trip():
    assert str(parse_sku("glov-0010-l")) == "GLOV-0010-L"
