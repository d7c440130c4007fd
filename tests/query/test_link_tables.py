"""A table of pairs of a many-to-many relation (``Customer_Addresses``: a customer and
an address, with a date beside them) carries a condition to the other side: "customers
who live in Colorado" are those with an address in Colorado."""

from __future__ import annotations

from agent_search.query.dsl import ModelSchema, RelationSchema, validate_dsl
from agent_search.query.nl._parser import parse
from agent_search.query.nl._reading._schema import candidates, is_link_of
from tests.support.query_schemas import NOW, f


def _addresses() -> list[ModelSchema]:
    return [
        ModelSchema(id="Customers", table="Customers", primary_key="customer_id",
                    title_field="customer_name",
                    fields=[f("customer_id", "integer", primary=True), f("customer_name"),
                            f("payment_method", values=["Cash", "Visa"])],
                    relations=[RelationSchema(name="customer_addresses", type="hasMany",
                                              model="Customer_Addresses", key="customer_id",
                                              foreign="customer_id")]),
        ModelSchema(id="Customer_Addresses", table="Customer_Addresses",
                    fields=[f("customer_id", "integer"), f("address_id", "integer"),
                            f("date_address_from", "date")],
                    relations=[RelationSchema(name="customer", type="hasOne",
                                              model="Customers", key="customer_id",
                                              foreign="customer_id"),
                               RelationSchema(name="address", type="hasOne",
                                              model="Addresses", key="address_id",
                                              foreign="address_id")]),
        ModelSchema(id="Addresses", table="Addresses", primary_key="address_id",
                    fields=[f("address_id", "integer", primary=True),
                            f("city", values=["Lake Geovannyton", "Port Chelsea"]),
                            f("state_province_county", values=["Colorado", "Texas"])],
                    relations=[RelationSchema(name="customer_addresses", type="hasMany",
                                              model="Customer_Addresses", key="address_id",
                                              foreign="address_id")]),
    ]


def test_a_table_of_pairs_links_the_tables_it_points_at() -> None:
    by_id = {m.id.lower(): m for m in _addresses()}
    link, customers, addresses = (by_id["customer_addresses"], by_id["customers"],
                                  by_id["addresses"])
    assert is_link_of(link, customers) and is_link_of(link, addresses)
    assert not is_link_of(addresses, customers)  # one key of its own: not a pair
    paths = {c.path for c in candidates(customers, by_id)}
    assert "customer_addresses.address.state_province_county" in paths
    assert "customer_addresses.address.address_id" not in paths  # no known values


def test_a_value_of_the_other_side_is_a_condition_through_the_pairs() -> None:
    out = parse("Find the names of customers who are living in Colorado.", _addresses(),
                now=NOW)
    validate_dsl(out, _addresses())
    assert out["model"] == "Customers"
    assert out["wheres"] == [{"field": "customer_addresses.address.state_province_county",
                              "op": "=", "value": "Colorado"}]
