# The store example: four items already in an unbounded store, two
# workers get in an endless loop without spending time. Each get yields and
# resumes in the same instant, so the workers alternate.
import simpy

env = simpy.Environment()
st = simpy.Store(env)
for i in range(4):
    st.put(i)


def worker(n):
    while True:
        item = yield st.get()
        print('%s got%d' % (n, item))


for n in ['A', 'B']:
    env.process(worker(n))
env.run()
print('done t=%d' % env.now)
