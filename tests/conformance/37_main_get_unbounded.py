# A get by the main script from an unbounded store takes the item at once
# and queues its completion like any other get (peek and step see it).
import simpy

env = simpy.Environment()


def pk():
    p = env.peek()
    return 'inf' if p == float('inf') else '%d' % p


st = simpy.Store(env)
st.put('a')
st.put('b')
env.run()
print('t=%d peek=%s items=%d' % (env.now, pk(), len(st.items)))
x = st.get().value
print('main got %s peek=%s items=%d' % (x, pk(), len(st.items)))
n = 0
while env.peek() < float('inf'):
    env.step()
    n += 1
print('steps=%d' % n)
