"""The ComicInfo v2.0 schema (the Anansi project's), as the tests validate exports against it.

No package on PyPI ships the v2.0 XSD (comicinfoxml and comicapi ship none;
comicbox ships only the v2.1 draft), so this module states the schema's
definition as read from the project's published v2.0 schema: the elements of
`ComicInfo`, an xs:sequence in this order, each optional, with its type; the
restricted string types and their values; a page's attributes. `xsd()` writes
it as an XML Schema document for a real validator (xmlschema).
"""

from __future__ import annotations

import xmlschema

STRING, INT = "xs:string", "xs:int"

ELEMENTS = [
    ("Title", STRING),
    ("Series", STRING),
    ("Number", STRING),
    ("Count", INT),
    ("Volume", INT),
    ("AlternateSeries", STRING),
    ("AlternateNumber", STRING),
    ("AlternateCount", INT),
    ("Summary", STRING),
    ("Notes", STRING),
    ("Year", INT),
    ("Month", INT),
    ("Day", INT),
    ("Writer", STRING),
    ("Penciller", STRING),
    ("Inker", STRING),
    ("Colorist", STRING),
    ("Letterer", STRING),
    ("CoverArtist", STRING),
    ("Editor", STRING),
    ("Publisher", STRING),
    ("Imprint", STRING),
    ("Genre", STRING),
    ("Web", STRING),
    ("PageCount", INT),
    ("LanguageISO", STRING),
    ("Format", STRING),
    ("BlackAndWhite", "YesNo"),
    ("Manga", "Manga"),
    ("Characters", STRING),
    ("Teams", STRING),
    ("Locations", STRING),
    ("ScanInformation", STRING),
    ("StoryArc", STRING),
    ("SeriesGroup", STRING),
    ("AgeRating", "AgeRating"),
    ("Pages", "ArrayOfComicPageInfo"),
    ("CommunityRating", "Rating"),
    ("MainCharacterOrTeam", STRING),
    ("Review", STRING),
]

ENUMERATIONS = {
    "YesNo": ["Unknown", "No", "Yes"],
    "Manga": ["Unknown", "No", "Yes", "YesAndRightToLeft"],
    "AgeRating": [
        "Unknown",
        "Adults Only 18+",
        "Early Childhood",
        "Everyone",
        "Everyone 10+",
        "G",
        "Kids to Adults",
        "M",
        "MA15+",
        "Mature 17+",
        "PG",
        "R18+",
        "Rating Pending",
        "Teen",
        "X18+",
    ],
}
PAGE_TYPES = [
    "FrontCover",
    "InnerCover",
    "Roundup",
    "Story",
    "Advertisement",
    "Editorial",
    "Letters",
    "Preview",
    "BackCover",
    "Other",
    "Deleted",
]
PAGE_ATTRIBUTES = [
    ('name="Image" type="xs:int" use="required"'),
    ('name="Type" type="ComicPageType"'),
    ('name="DoublePage" type="xs:boolean"'),
    ('name="ImageSize" type="xs:long"'),
    ('name="Key" type="xs:string"'),
    ('name="Bookmark" type="xs:string"'),
    ('name="ImageWidth" type="xs:int"'),
    ('name="ImageHeight" type="xs:int"'),
]


def xsd() -> str:
    elements = "".join(
        f'<xs:element minOccurs="0" maxOccurs="1" name="{name}" type="{kind}"/>'
        for name, kind in ELEMENTS
    )
    enumerations = "".join(
        f'<xs:simpleType name="{name}"><xs:restriction base="xs:string">'
        + "".join(f'<xs:enumeration value="{v}"/>' for v in values)
        + "</xs:restriction></xs:simpleType>"
        for name, values in ENUMERATIONS.items()
    )
    page_types = "".join(f'<xs:enumeration value="{v}"/>' for v in PAGE_TYPES)
    attributes = "".join(f"<xs:attribute {a}/>" for a in PAGE_ATTRIBUTES)
    return (
        '<xs:schema elementFormDefault="qualified" xmlns:xs="http://www.w3.org/2001/XMLSchema">'
        '<xs:element name="ComicInfo" nillable="true" type="ComicInfo"/>'
        f'<xs:complexType name="ComicInfo"><xs:sequence>{elements}</xs:sequence></xs:complexType>'
        f"{enumerations}"
        '<xs:simpleType name="Rating"><xs:restriction base="xs:decimal">'
        '<xs:minInclusive value="0"/><xs:maxInclusive value="5"/>'
        '<xs:fractionDigits value="2"/></xs:restriction></xs:simpleType>'
        '<xs:complexType name="ArrayOfComicPageInfo"><xs:sequence>'
        '<xs:element minOccurs="0" maxOccurs="unbounded" name="Page" nillable="true" '
        'type="ComicPageInfo"/></xs:sequence></xs:complexType>'
        f'<xs:complexType name="ComicPageInfo">{attributes}</xs:complexType>'
        '<xs:simpleType name="ComicPageType"><xs:list><xs:simpleType>'
        f'<xs:restriction base="xs:string">{page_types}</xs:restriction>'
        "</xs:simpleType></xs:list></xs:simpleType>"
        "</xs:schema>"
    )


def schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(xsd())
