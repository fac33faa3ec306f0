#!/usr/bin/python3
"""A Secret Service for the tests: the parts of org.freedesktop.Secret.Service a client
reading one password uses, answered as GNOME Keyring answers them.

Owns org.freedesktop.secrets on the bus named by DBUS_SESSION_BUS_ADDRESS. Items come
from --item ATTR=VALUE,ATTR=VALUE:SECRET; --locked starts with the collection locked.
Every call is appended to RECORD as one JSON line. A test plays the person through
org.instantupload.Test: Unlock(), Lock(), SetSecret(attributes, secret).

Runs on Debian's python3-dbus and python3-gi (not the virtualenv): /usr/bin/python3.
The RECORD file appears once the name is owned; tests wait for it.
"""
import argparse
import json

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.freedesktop.secrets"
PATH = "/org/freedesktop/secrets"
SERVICE = "org.freedesktop.Secret.Service"
SESSION = "org.freedesktop.Secret.Session"
TEST = "org.instantupload.Test"
COLLECTION = PATH + "/collection/login"


class NotSupported(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.DBus.Error.NotSupported"


class NoSession(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.Secret.Error.NoSession"


class IsLocked(dbus.DBusException):
    _dbus_error_name = "org.freedesktop.Secret.Error.IsLocked"


class Session(dbus.service.Object):
    def __init__(self, service, path):
        super().__init__(service.bus, path)
        self.service = service
        self.path = path

    @dbus.service.method(SESSION)
    def Close(self):
        self.service.record({"method": "Close", "session": self.path})
        self.service.sessions.discard(self.path)
        self.remove_from_connection()


class Service(dbus.service.Object):
    def __init__(self, bus, record, items, locked):
        super().__init__(bus, PATH)
        self.bus = bus
        self.record_path = record
        self.items = {}  # path -> (attributes, secret)
        for attributes, secret in items:
            self.items[f"{COLLECTION}/{len(self.items) + 1}"] = (attributes, secret)
        self.locked = locked
        self.sessions = {}  # path -> Session, kept alive here
        self.next_session = 1

    def record(self, entry):
        with open(self.record_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    @dbus.service.method(SERVICE, in_signature="sv", out_signature="vo")
    def OpenSession(self, algorithm, _input):
        self.record({"method": "OpenSession", "algorithm": str(algorithm)})
        if algorithm != "plain":
            raise NotSupported(f"algorithm {algorithm} is not supported")
        path = f"{PATH}/session/{self.next_session}"
        self.next_session += 1
        self.sessions[path] = Session(self, path)
        return (dbus.String("", variant_level=1), dbus.ObjectPath(path))

    @dbus.service.method(SERVICE, in_signature="a{ss}", out_signature="aoao")
    def SearchItems(self, attributes):
        wanted = {str(k): str(v) for k, v in attributes.items()}
        self.record({"method": "SearchItems", "attributes": wanted})
        matches = [dbus.ObjectPath(p) for p, (attrs, _) in self.items.items()
                   if all(attrs.get(k) == v for k, v in wanted.items())]
        if self.locked:
            return (dbus.Array([], signature="o"), dbus.Array(matches, signature="o"))
        return (dbus.Array(matches, signature="o"), dbus.Array([], signature="o"))

    @dbus.service.method(SERVICE, in_signature="aoo", out_signature="a{o(oayays)}")
    def GetSecrets(self, items, session):
        self.record({"method": "GetSecrets", "items": [str(i) for i in items], "session": str(session)})
        if str(session) not in self.sessions:
            raise NoSession("no such session")
        if self.locked:
            raise IsLocked("the collection is locked")
        result = dbus.Dictionary({}, signature="o(oayays)")
        for item in items:
            if str(item) in self.items:
                secret = self.items[str(item)][1].encode()
                result[item] = (session, dbus.ByteArray(b""), dbus.ByteArray(secret), "text/plain")
        return result

    @dbus.service.method(TEST)
    def Unlock(self):
        self.locked = False

    @dbus.service.method(TEST)
    def Lock(self):
        self.locked = True

    @dbus.service.method(TEST, in_signature="a{ss}s")
    def SetSecret(self, attributes, secret):
        wanted = {str(k): str(v) for k, v in attributes.items()}
        for path, (attrs, _) in self.items.items():
            if attrs == wanted:
                self.items[path] = (attrs, str(secret))
                return
        self.items[f"{COLLECTION}/{len(self.items) + 1}"] = (wanted, str(secret))


def parse_item(text):
    attributes, _, secret = text.partition(":")
    pairs = dict(pair.split("=", 1) for pair in attributes.split(",") if pair)
    return pairs, secret


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", required=True)
    parser.add_argument("--item", action="append", default=[], type=parse_item)
    parser.add_argument("--locked", action="store_true")
    args = parser.parse_args()
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    service = Service(bus, args.record, args.item, args.locked)
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)  # owned while this is referenced
    open(args.record, "a").close()
    GLib.MainLoop().run()
    del name


if __name__ == "__main__":
    main()
