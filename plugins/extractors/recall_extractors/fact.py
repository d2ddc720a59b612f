"""One fact a statement states, before the inventory's spelling is applied."""

from __future__ import annotations

from dataclasses import dataclass

from recall_core.kit.attributes import ENDED, normalise_triple, value_key


@dataclass(frozen=True)
class Fact:
    entity: str
    attribute: str
    value: str
    ended: bool = False
    #: the memory's text when it is not the statement's ("I work as a data engineer" for
    #: the role in "I work at Northwind as a data engineer": a later employer then
    #: supersedes a text that does not name the old one)
    text: str | None = None
    #: "place": a place only a move verb suggests ("moved to Red Hat"), for the classifier
    #: to check when it is installed
    check: str | None = None

    def triple(self) -> tuple[str, str, str] | None:
        """The canonical triple (`recall_core.kit.attributes.normalise_triple`)."""
        if self.ended:
            return normalise_triple(self.entity, f"{self.attribute}:{value_key(self.value)}",
                                    ENDED)
        return normalise_triple(self.entity, self.attribute, self.value)
