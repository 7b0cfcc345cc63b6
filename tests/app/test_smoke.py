from app_harness import Client, Server


async def test_two_people_sit_and_start(server: Server) -> None:
    code = await server.new_room()
    ann = await Client(server, code, "Ann").connect()
    bob = await Client(server, code, "Bob").connect()
    assert ann.state["you"]["host"]
    assert (await ann.ok("sit", {"seat": None}))["seat"] == 0
    assert (await bob.ok("sit", {"seat": 3}))["seat"] == 3
    assert (await ann.ok("start"))["game"] == 1
    state = await bob.wait_state(lambda s: s["phase"] == "playing")
    assert [s["name"] for s in state["seats"]] == ["Ann", "Bob"]
    assert state["you"]["seat"] == 1
    await ann.close()
    await bob.close()
