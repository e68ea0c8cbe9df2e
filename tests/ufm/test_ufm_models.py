"""Models of UFM payloads: both event shapes, lenient fields, wrapped lists, timestamps."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any, ClassVar

import pytest

from fabric.ufm.models import (
    Alarm,
    Event,
    Job,
    JobStatus,
    Link,
    Port,
    ShapeError,
    System,
    UnhealthyPort,
    Versioning,
    parse_list,
    parse_ufm_timestamp,
    unwrap_list,
)
from fabric.ufm.objects import PortEnd

# The two documented event shapes (UFM REST API guide, up to 6.16 and from 6.17).
OLD_EVENT = {
    "category": "Hardware",
    "severity": "Warning",
    "timestamp": "2017-09-19 10:49:03.018",
    "counter": None,
    "object_name": "1c34da0300728606_1",
    "object_path": "default / Switch: SLG01-02 / NA / 1",
    "name": "Link Downed",
    "write_to_syslog": False,
    "type": "352",
    "id": 227,
    "description": "Link-Downed counter delta threshold exceeded.",
}
NEW_EVENT = {
    "id": 97213,
    "name": "MCast Group Deleted",
    "type": "Site",
    "event_type": "67",
    "severity": "Info",
    "timestamp": "2024-05-28 08:03:05",
    "counter": "N/A",
    "category": "Fabric Notification",
    "object_name": "default",
    "object_path": "default(2)",
    "write_to_syslog": False,
    "description": "Mcast group is deleted",
}


class TestEvent:
    def test_old_shape_type_is_the_event_number(self) -> None:
        event = Event.model_validate(OLD_EVENT)
        assert event.event_id == 352
        assert event.object_type is None
        assert event.id == 227
        assert event.type == "352"
        assert event.timestamp == datetime(2017, 9, 19, 10, 49, 3, 18000, tzinfo=UTC)

    def test_new_shape_type_is_the_object_type(self) -> None:
        event = Event.model_validate(NEW_EVENT)
        assert event.event_id == 67
        assert event.object_type == "Site"
        assert event.counter is None  # "N/A"
        assert event.timestamp == datetime(2024, 5, 28, 8, 3, 5, tzinfo=UTC)
        assert event.timestamp.tzinfo is not None

    def test_numeric_type_and_counter_values(self) -> None:
        event = Event.model_validate({**OLD_EVENT, "type": 110, "counter": 250})
        assert event.event_id == 110
        assert event.type == "110"
        assert event.counter == 250

    def test_unknown_fields_are_kept(self) -> None:
        event = Event.model_validate({**NEW_EVENT, "brand_new_field": {"x": 1}})
        assert event.model_extra == {"brand_new_field": {"x": 1}}

    @pytest.mark.parametrize(
        "broken",
        [
            {k: v for k, v in OLD_EVENT.items() if k != "id"},
            {**OLD_EVENT, "id": "not-a-number"},
            {**OLD_EVENT, "id": True},
            {**OLD_EVENT, "timestamp": "yesterday"},
            {k: v for k, v in NEW_EVENT.items() if k != "event_type"},  # type "Site" is no number
        ],
    )
    def test_events_without_usable_id_number_or_time_are_rejected(self, broken: dict[str, object]) -> None:
        with pytest.raises(ValueError):
            Event.model_validate(broken)

    def test_severity_is_normalised(self) -> None:
        assert Event.model_validate({**OLD_EVENT, "severity": "WARNING"}).severity == "Warning"

    def test_server_timezone_from_context(self) -> None:
        plus2 = timezone(timedelta(hours=2))
        event = Event.model_validate(NEW_EVENT, context={"tz": plus2})
        assert event.timestamp == datetime(2024, 5, 28, 6, 3, 5, tzinfo=UTC)

    def test_object_path_of_an_old_shape_event(self) -> None:
        ref = Event.model_validate(OLD_EVENT).ref
        assert (ref.site, ref.device_kind, ref.device_name) == ("default", "Switch", "SLG01-02")
        assert ref.ends is None

    def test_link_event_ends(self) -> None:
        event = Event.model_validate(
            {
                **NEW_EVENT,
                "type": "Link",
                "event_type": "329",
                "object_path": "1c34da0300728606_37 : 1c34da0300728a06_2",
            }
        )
        assert event.link_ends == (PortEnd("1c34da0300728606", 37), PortEnd("1c34da0300728a06", 2))


class TestTimestamps:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("2017-09-19 10:49:03.018", datetime(2017, 9, 19, 10, 49, 3, 18000, tzinfo=UTC)),
            ("2024-05-28 08:03:05", datetime(2024, 5, 28, 8, 3, 5, tzinfo=UTC)),
            ("2024-05-28T08:03:05Z", datetime(2024, 5, 28, 8, 3, 5, tzinfo=UTC)),
            ("2024-05-28 10:03:05+02:00", datetime(2024, 5, 28, 8, 3, 5, tzinfo=UTC)),
            (1716883385, datetime(2024, 5, 28, 8, 3, 5, tzinfo=UTC)),
            (1716883385000, datetime(2024, 5, 28, 8, 3, 5, tzinfo=UTC)),
        ],
    )
    def test_formats(self, raw: object, expected: datetime) -> None:
        parsed = parse_ufm_timestamp(raw)
        assert parsed == expected
        assert parsed.utcoffset() == timedelta(0)

    @pytest.mark.parametrize("raw", ["", "N/A", "2024-13-01 00:00:00", None, [2024]])
    def test_garbage(self, raw: object) -> None:
        with pytest.raises(ValueError):
            parse_ufm_timestamp(raw)


class TestLink:
    @pytest.mark.parametrize(("width", "lanes"), [("4x", 4), ("IB_4x", 4), ("1x", 1), ("12X", 12), ("", None)])
    def test_lanes(self, width: str, lanes: int | None) -> None:
        link = Link.model_validate(
            {
                "source_guid": "1c34da0300728606",
                "source_port": "37",
                "destination_guid": "1c34da0300728a06",
                "destination_port": 2,
                "width": width,
            }
        )
        assert link.lanes == lanes
        assert link.destination_port == "2"
        assert link.source == PortEnd("1c34da0300728606", 37)
        assert link.destination.name == "1c34da0300728a06_2"

    def test_link_without_ends_is_rejected(self) -> None:
        with pytest.raises(ValueError):
            Link.model_validate({"name": "x", "width": "4x"})


class TestPortAndSystem:
    def test_port_na_fields_and_helpers(self) -> None:
        port = Port.model_validate(
            {
                "name": "0c42a10300280000_1",
                "systemID": "0x0C42A10300280000",
                "peer": "N/A",
                "lid": "N/A",
                "tier": "4",
                "physical_state": "Disabled",
                "capabilities": "disable",
            }
        )
        assert port.peer is None
        assert port.lid is None
        assert port.tier == 4
        assert port.system_guid == "0c42a10300280000"
        assert port.is_disabled
        assert port.capabilities == ["disable"]
        assert port.end == PortEnd("0c42a10300280000", 1)

    def test_port_requires_a_name(self) -> None:
        with pytest.raises(ValueError):
            Port.model_validate({"guid": "0c42a10300280000"})

    def test_system_known_ip(self) -> None:
        system = System.model_validate({"guid": "1c34da0300728606", "ip": "0.0.0.0", "type": "switch"})
        assert system.known_ip is None
        assert system.is_switch


class TestJob:
    @pytest.mark.parametrize(
        ("status", "in_progress", "succeeded", "failed", "member"),
        [
            ("Running", True, False, False, JobStatus.RUNNING),
            ("Completed", False, True, False, JobStatus.COMPLETED),
            ("Completed With Warnings", False, True, False, JobStatus.COMPLETED_WITH_WARNINGS),
            ("Completed With Errors", False, False, True, JobStatus.COMPLETED_WITH_ERRORS),
            ("Aborted", False, False, True, JobStatus.ABORTED),
            ("completed with errors", False, False, True, JobStatus.COMPLETED_WITH_ERRORS),
            ("Exploded", False, False, True, None),
        ],
    )
    def test_status(
        self, status: str, in_progress: bool, succeeded: bool, failed: bool, member: JobStatus | None
    ) -> None:
        job = Job.model_validate({"ID": 12, "Status": status, "Progress": 100, "RelatedObjects": ["a"]})
        assert (job.in_progress, job.succeeded, job.failed) == (in_progress, succeeded, failed)
        assert job.status is member
        assert job.ID == "12"

    def test_documented_example(self) -> None:
        job = Job.model_validate(
            {
                "Status": "Completed",
                "Foreground": True,
                "Description": " Shows SNMP settings and status",
                "RelatedObjects": ["10.209.36.140"],
                "Created": "2017-04-25 14:50:29",
                "LastUpdated": "2017-04-25 14:50:36",
                "Summary": "show snmp\n\nSNMP enabled: yes\n",
                "CreatedBy": "admin",
                "Progress": 100,
                "Operation": "Run CLI",
            }
        )
        assert job.Created == datetime(2017, 4, 25, 14, 50, 29, tzinfo=UTC)
        assert job.succeeded


class TestUnhealthyPort:
    BASE: ClassVar[dict[str, Any]] = {
        "UnhealthyGUID": "0x1c34da0300728606",
        "UnhealthyPortNumber": 7,
        "UnhealthyPortDname": "7",
        "UnhealthyNode": "SLG01-02",
        "PeerGUID": "0c42a103001b8256",
        "PeerPortNumber": "1",
        "State": "UNHEALTHY",
        "StatusTime": "2024-05-28 08:03:05",
    }

    def test_condition_string_becomes_list(self) -> None:
        entry = UnhealthyPort.model_validate({**self.BASE, "Condition": "MANUAL"})
        assert entry.Condition == ["MANUAL"]

    def test_condition_list_stays_list(self) -> None:
        entry = UnhealthyPort.model_validate({**self.BASE, "Condition": ["MANUAL", "FLAPPING"]})
        assert entry.Condition == ["MANUAL", "FLAPPING"]

    def test_port_names_both_sides(self) -> None:
        entry = UnhealthyPort.model_validate({**self.BASE, "Condition": "MANUAL"})
        assert entry.port_name == "1c34da0300728606_7"
        assert entry.peer_port_name == "0c42a103001b8256_1"
        assert entry.ports == {"1c34da0300728606_7", "0c42a103001b8256_1"}

    def test_a_port_without_a_cable_names_itself_alone(self) -> None:
        entry = UnhealthyPort.model_validate({**self.BASE, "PeerGUID": "N/A", "PeerPortNumber": "N/A",
                                              "PeerPort": "N/A", "Condition": "MANUAL"})
        assert entry.ports == {"1c34da0300728606_7"}

    def test_the_rest_guides_own_examples_name_their_ports_by_guid_and_number(self) -> None:
        # The list example (6.20-6.22): ``UnhealthyPort`` a path, not a port name; the single-port example: "1".
        listed = UnhealthyPort.model_validate({
            "PeerLID": "18", "PeerPortNumber": 6, "UnhealthyPortNumber": 1, "PeerGUID": "248a070300f88fe0",
            "PeerPort": "switch-ec4034/6", "UnhealthyNode": "r-dmz-ufm135", "UnhealthyPort": "r-dmz-ufm135/HCA-1/1",
            "State": "Info", "PeerPortDname": "6", "Condition": "MANUAL", "PeerNode": "switch-ec4034",
            "StatusTime": "Wed Apr 29 00:05:32 2020", "UnhealthyPortDname": "HCA-1/1",
            "UnhealthyGUID": "248a0703002e628e"})
        one = UnhealthyPort.model_validate({
            "PeerPort": "sw-ufm-ib01 / 35", "PeerGUID": "0002c903007e5220", "UnhealthyGUID": "ec0d9a0300d42e54",
            "UnhealthyPort": "1", "UnhealthyPortNumber": 1, "Condition": ["MANUAL"], "State": "Warning"})
        assert listed.ports == {"248a0703002e628e_1", "248a070300f88fe0_6"} and listed.manual
        assert one.ports == {"ec0d9a0300d42e54_1"} and one.manual  # no PeerPortNumber: its side unnamed

    @pytest.mark.parametrize(("condition", "manual"), [
        ("MANUAL", True), (["MANUAL"], True), ("manual", True), (["FLAPPING", "MANUAL"], True),
        ("FLAPPING", False), (["NOISY"], False), ([], False), (None, False)])
    def test_marked_by_hand_in_either_form_of_condition(self, condition: Any, manual: bool) -> None:
        assert UnhealthyPort.model_validate({**self.BASE, "Condition": condition}).manual is manual


class TestAlarmAndVersioning:
    def test_alarm_documented_example(self) -> None:
        alarm = Alarm.model_validate(
            {
                "id": 1,
                "event_type": 394,
                "type": 55,
                "name": "Module status FAULT",
                "severity": "Critical",
                "timestamp": "2017-05-08 11:48:09.351",
                "event_count": 31,
                "duration": 420,
                "counter": None,
                "related_object_name": "1c34da0300728606",
                "related_object_path": "default / Switch: r-ufm-sw63",
            }
        )
        assert alarm.event_type == 394
        assert alarm.type == "55"
        assert alarm.timestamp == datetime(2017, 5, 8, 11, 48, 9, 351000, tzinfo=UTC)

    def test_versioning_keeps_unknown_counters(self) -> None:
        versioning = Versioning.model_validate({"ports_version": 3, "new_thing_version": 9, "other": "x"})
        assert versioning.versions() == {"ports_version": 3, "new_thing_version": 9}


class TestLists:
    ITEM: ClassVar[dict[str, Any]] = {"guid": "1c34da0300728606"}

    def test_bare_and_wrapped_lists(self) -> None:
        assert unwrap_list([self.ITEM]) == [self.ITEM]
        assert unwrap_list({"data": [self.ITEM], "page": 1}) == [self.ITEM]
        assert [s.guid for s in parse_list(System, {"data": [self.ITEM]})] == ["1c34da0300728606"]

    @pytest.mark.parametrize("payload", [{"items": []}, "text", 7, None, {"data": {"x": 1}}])
    def test_wrong_shapes(self, payload: object) -> None:
        with pytest.raises(ShapeError):
            unwrap_list(payload)

    def test_one_bad_element_fails_the_whole_list(self) -> None:
        with pytest.raises(ShapeError, match="element 1"):
            parse_list(System, [self.ITEM, {"name": "no guid"}, self.ITEM])
        with pytest.raises(ShapeError, match="element 0"):
            parse_list(System, ["not an object"])


@pytest.mark.parametrize("raw", ["9999-12-31T23:59:59-07:00", "0001-01-01T00:00:00+05:00", 1e20, -1e20, float("inf"),
                                 10**400, None, [2024]])
def test_timestamps_that_cannot_be_a_time_are_value_errors(raw: object) -> None:
    """Whatever UFM (or a file claiming to be its) sends, a bad timestamp is a ValueError the caller counts,
    never an OverflowError or OSError that ends the daemon's cycle."""
    with pytest.raises(ValueError, match="not a UFM timestamp"):
        parse_ufm_timestamp(raw)
