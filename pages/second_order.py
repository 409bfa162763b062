import streamlit as st
st.write('second_order')
